import type { Db } from "../store/db.js";
import { recordReads, type ReadRecord } from "../store/memory.js";

const FLUSH_DELAY_MS = 250;

/**
 * Counts reads. Search hits are buffered and written together a moment later, keeping the
 * search path read-only; a direct read is written at once so its response shows it.
 */
export class ReadRecorder {
  private pending: ReadRecord[] = [];
  private timer: NodeJS.Timeout | null = null;

  constructor(private readonly db: Db) {}

  record(reads: ReadRecord[]): void {
    if (reads.length === 0) return;
    this.pending.push(...reads);
    this.timer ??= setTimeout(() => this.flush(), FLUSH_DELAY_MS);
  }

  recordNow(reads: ReadRecord[]): void {
    this.pending.push(...reads);
    this.flush();
  }

  flush(): void {
    if (this.timer) clearTimeout(this.timer);
    this.timer = null;
    if (this.pending.length === 0 || !this.db.sqlite.open) return;
    const batch = this.pending;
    this.pending = [];
    this.db.write(() => recordReads(this.db, batch));
  }
}
