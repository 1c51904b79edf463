import type { Logger } from "../core/log.js";

/** Periodic background work; a failing run is logged and the schedule goes on. */
export class Jobs {
  private readonly timers: NodeJS.Timeout[] = [];
  private stopped = false;

  constructor(private readonly log: Logger) {}

  every(name: string, intervalMs: number, run: () => unknown): void {
    const timer = setInterval(() => {
      if (this.stopped) return;
      try {
        const result = run();
        if (result instanceof Promise) result.catch((error: unknown) => this.log.error("job failed", { job: name, error }));
      } catch (error) {
        this.log.error("job failed", { job: name, error });
      }
    }, intervalMs);
    timer.unref();
    this.timers.push(timer);
  }

  stop(): void {
    this.stopped = true;
    for (const timer of this.timers) clearInterval(timer);
  }
}
