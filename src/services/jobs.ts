import type { Logger } from "../core/log.js";
import type { Store } from "../store/store.js";

/**
 * Periodic background work; a failing run is logged and the schedule goes on. A run still going
 * when its next one is due makes that one skip, so runs of one job never overlap.
 */
export class Jobs {
  private readonly timers: NodeJS.Timeout[] = [];
  private stopped = false;

  constructor(
    private readonly log: Logger,
    private readonly store: Store,
  ) {}

  /** Work on this process's own state (its in-memory tables): every process runs it. */
  every(name: string, intervalMs: number, run: () => unknown): void {
    this.schedule(name, intervalMs, run);
  }

  /**
   * Work on the shared store: whichever process claims an interval's run does it, so it happens
   * once per interval however many servers share the database.
   */
  once(name: string, intervalMs: number, run: () => unknown): void {
    // Claimed a little short of the interval, so the claimer's own next tick, however late its
    // timer fires, finds the job due again.
    const slack = Math.min(1_000, intervalMs / 10);
    this.schedule(name, intervalMs, async () => {
      const at = Date.now();
      const claimed = await this.store.transaction((tx) =>
        this.store.jobs.claim(tx, name, new Date(at).toISOString(), new Date(at + intervalMs - slack).toISOString()),
      );
      if (claimed) await run();
    });
  }

  private schedule(name: string, intervalMs: number, run: () => unknown): void {
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
