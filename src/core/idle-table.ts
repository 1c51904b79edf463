/**
 * An in-memory table that cannot grow without bound: at most `capacity` entries. Entries that are
 * idle (the owner says when: a refilled rate bucket, failures older than the window) are dropped
 * by `sweep`, and when a new key arrives at capacity; if none is idle, the least recently used
 * entry goes. Used by every limiter and throttle that unauthenticated callers can add keys to.
 */
export class IdleTable<V> {
  private readonly entries = new Map<string, V>();
  // A sweep that freed nothing is not repeated on every insert: a flood of new keys would make
  // each one cost a pass over the whole table.
  private lastFruitlessSweepMs = Number.NEGATIVE_INFINITY;

  constructor(
    readonly capacity: number,
    private readonly isIdle: (value: V, nowMs: number) => boolean,
    private readonly resweepMs = 1000,
  ) {
    if (!Number.isInteger(capacity) || capacity < 1) throw new RangeError("capacity must be a positive integer");
  }

  get size(): number {
    return this.entries.size;
  }

  get(key: string): V | undefined {
    return this.entries.get(key);
  }

  /** Stores the value as the most recently used entry, making room first if the key is new. */
  set(key: string, value: V, nowMs: number): void {
    if (this.entries.has(key)) this.entries.delete(key);
    else if (this.entries.size >= this.capacity) this.makeRoom(nowMs);
    this.entries.set(key, value);
  }

  delete(key: string): void {
    this.entries.delete(key);
  }

  /** Drops every idle entry; returns how many went. */
  sweep(nowMs: number): number {
    let dropped = 0;
    for (const [key, value] of this.entries) {
      if (this.isIdle(value, nowMs)) {
        this.entries.delete(key);
        dropped++;
      }
    }
    return dropped;
  }

  private makeRoom(nowMs: number): void {
    if (nowMs - this.lastFruitlessSweepMs >= this.resweepMs) {
      if (this.sweep(nowMs) > 0) return;
      this.lastFruitlessSweepMs = nowMs;
    }
    const oldest = this.entries.keys().next();
    if (!oldest.done) this.entries.delete(oldest.value);
  }
}
