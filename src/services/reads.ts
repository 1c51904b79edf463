import type { Logger } from "../core/log.js";
import type { ReadRecord } from "../store/memory.js";
import type { Store } from "../store/store.js";

const FLUSH_DELAY_MS = 250;

/**
 * Counts reads. Search hits are buffered and written together a moment later, keeping the
 * search path read-only; a direct read is written at once so its response shows it. One flush
 * runs at a time: the next one waits for it, so a burst of searches never piles up transactions
 * that lock the same counters.
 */
export class ReadRecorder {
  private pending: ReadRecord[] = [];
  private timer: NodeJS.Timeout | null = null;
  private flushing: Promise<void> = Promise.resolve();

  constructor(
    private readonly store: Store,
    private readonly log: Logger,
  ) {}

  record(reads: ReadRecord[]): void {
    if (reads.length === 0) return;
    this.pending.push(...reads);
    this.timer ??= setTimeout(() => {
      // Counters are not worth a crash: a batch that cannot be written is logged and dropped.
      this.flush().catch((error: unknown) => this.log.warn("could not record search reads", { error }));
    }, FLUSH_DELAY_MS);
  }

  async recordNow(reads: ReadRecord[]): Promise<void> {
    this.pending.push(...reads);
    await this.flush();
  }

  flush(): Promise<void> {
    if (this.timer) clearTimeout(this.timer);
    this.timer = null;
    const next = this.flushing.catch(() => undefined).then(() => this.writePending());
    this.flushing = next;
    return next;
  }

  private async writePending(): Promise<void> {
    if (this.pending.length === 0 || !this.store.open) return;
    const batch = this.pending;
    this.pending = [];
    await this.store.transaction((tx) => this.store.memory.recordReads(tx, batch));
  }
}
