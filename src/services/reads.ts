import type { ReadRecord } from "../store/memory.js";
import type { Store } from "../store/store.js";

const FLUSH_DELAY_MS = 250;

/**
 * Counts reads. Search hits are buffered and written together a moment later, keeping the
 * search path read-only; a direct read is written at once so its response shows it.
 */
export class ReadRecorder {
  private pending: ReadRecord[] = [];
  private timer: NodeJS.Timeout | null = null;

  constructor(private readonly store: Store) {}

  record(reads: ReadRecord[]): void {
    if (reads.length === 0) return;
    this.pending.push(...reads);
    this.timer ??= setTimeout(() => void this.flush(), FLUSH_DELAY_MS);
  }

  async recordNow(reads: ReadRecord[]): Promise<void> {
    this.pending.push(...reads);
    await this.flush();
  }

  async flush(): Promise<void> {
    if (this.timer) clearTimeout(this.timer);
    this.timer = null;
    if (this.pending.length === 0 || !this.store.open) return;
    const batch = this.pending;
    this.pending = [];
    await this.store.transaction((tx) => this.store.memory.recordReads(tx, batch));
  }
}
