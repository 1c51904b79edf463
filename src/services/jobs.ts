import type { Logger } from "../core/log.js";

/**
 * Periodic background work; a failing run is logged and the schedule goes on. A run still going
 * when its next one is due makes that one skip, so runs of one job never overlap.
 */
export class Jobs {
  private readonly timers: NodeJS.Timeout[] = [];
  private stopped = false;

  constructor(private readonly log: Logger) {}

  every(name: string, intervalMs: number, run: () => unknown): void {
    let running = false;
    const timer = setInterval(() => {
      if (this.stopped || running) return;
      running = true;
      void this.runOnce(name, run).finally(() => {
        running = false;
      });
    }, intervalMs);
    timer.unref();
    this.timers.push(timer);
  }

  private async runOnce(name: string, run: () => unknown): Promise<void> {
    try {
      await run();
    } catch (error) {
      this.log.error("job failed", { job: name, error });
    }
  }

  stop(): void {
    this.stopped = true;
    for (const timer of this.timers) clearInterval(timer);
  }
}
