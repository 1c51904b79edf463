import { setTimeout as sleep } from "node:timers/promises";
import type { Logger } from "../src/core/log.js";
import type { CairnClient } from "./client.js";
import type { ConflictPair, ConflictWatcher, WrittenEvent } from "./immediate.js";
import { followEventStream } from "./sse.js";

export const CURSOR_KEY = "stream_cursor";
/** Merges waiting for the model before the follower stops reading the stream. */
const MAX_QUEUED = 200;
/** Tries at one event before it is skipped (and logged), so one bad event cannot stall the archivist. */
const MAX_TRIES = 3;
const SAVE_EVERY_MS = 1000;

interface Queued {
  seq: number;
  pair: ConflictPair;
}

/**
 * Follows `memory.written` on the event stream from a saved cursor. Detection runs in stream order;
 * merges queue behind it. The saved cursor never passes an event whose merge has not finished, so
 * after a crash or restart every event from there on is seen again and nothing is lost.
 */
export class WriteFollower {
  private abort = new AbortController();
  private running: Promise<void> | null = null;
  /** The last event whose detection finished. */
  private detected: number;
  private readonly queue: Queued[] = [];
  private working: Queued | null = null;
  private worker: Promise<void> | null = null;
  private savedCursor: number;
  private saveTimer: NodeJS.Timeout | null = null;
  private failures = { seq: -1, count: 0 };
  private stopped = false;
  private drainedWaiters: (() => void)[] = [];
  /** On stop: the first queued event whose merge was dropped, so the saved cursor stays before it. */
  private droppedFrom: number | undefined;

  constructor(
    private readonly client: CairnClient,
    private readonly watcher: ConflictWatcher,
    private readonly log: Logger,
    cursor: number,
  ) {
    this.detected = cursor;
    this.savedCursor = cursor;
  }

  /** Every event up to here is fully handled (detected, and merged or reported). */
  get cursor(): number {
    const oldest = this.working?.seq ?? this.queue[0]?.seq ?? this.droppedFrom;
    return oldest === undefined ? this.detected : Math.min(this.detected, oldest - 1);
  }

  start(): void {
    this.running = this.follow();
  }

  private follow(): Promise<void> {
    return followEventStream({
      url: `${this.client.url}/events/stream?type=memory.written`,
      // Resumes after the last event whose detection finished, whatever the queue still holds.
      headers: () => ({ ...this.client.headers(), "last-event-id": String(this.detected) }),
      signal: this.abort.signal,
      log: this.log,
      what: "event stream",
      onEvent: async (message) => {
        if (message.event === "reset") {
          this.log.warn("event stream reset: events after the saved cursor were pruned before they were read");
          return false;
        }
        if (message.event !== "memory.written" || message.id === null) return false;
        await this.handle(JSON.parse(message.data) as WrittenEvent);
        return true;
      },
    });
  }

  private async handle(event: WrittenEvent): Promise<void> {
    if (event.seq <= this.detected) return;
    while (this.queue.length >= MAX_QUEUED && !this.stopped) await sleep(100);
    let pair: ConflictPair | null;
    try {
      pair = await this.watcher.detect(event);
    } catch (error) {
      if (this.failures.seq !== event.seq) this.failures = { seq: event.seq, count: 0 };
      if (++this.failures.count < MAX_TRIES) throw error;
      this.log.error("skipping an event the archivist could not check", { seq: event.seq, error });
      await this.client.log("error", "event.skipped", "an event could not be checked for conflicts", { seq: event.seq }).catch(() => undefined);
      pair = null;
    }
    this.detected = event.seq;
    // Both writes of a pair can find each other when the second lands before the first is checked.
    if (pair && !this.pending(pair)) {
      this.queue.push({ seq: event.seq, pair });
      this.worker ??= this.work();
    }
    this.scheduleSave();
  }

  private pending(pair: ConflictPair): boolean {
    const key = pairKey(pair);
    return (this.working !== null && pairKey(this.working.pair) === key) || this.queue.some((queued) => pairKey(queued.pair) === key);
  }

  private async work(): Promise<void> {
    for (let next = this.queue.shift(); next !== undefined; next = this.queue.shift()) {
      this.working = next;
      await this.watcher.resolve(next.pair);
      this.working = null;
      this.scheduleSave();
    }
    this.worker = null;
    for (const waiter of this.drainedWaiters.splice(0)) waiter();
  }

  private scheduleSave(): void {
    if (this.saveTimer || this.stopped) return;
    this.saveTimer = setTimeout(() => {
      this.saveTimer = null;
      void this.save();
    }, SAVE_EVERY_MS);
  }

  private async save(): Promise<void> {
    const cursor = this.cursor;
    if (cursor === this.savedCursor) return;
    try {
      await this.client.setState(CURSOR_KEY, cursor);
      this.savedCursor = cursor;
    } catch (error) {
      this.log.warn("could not save the stream cursor", { error });
    }
  }

  /** Resolves once no merge is queued or running. */
  drained(): Promise<void> {
    if (!this.worker) return Promise.resolve();
    return new Promise((resolve) => this.drainedWaiters.push(resolve));
  }

  /** Stops reading; lets a running merge finish (up to `graceMs`), then saves the cursor. */
  async stop(options: { graceMs: number; save: boolean }): Promise<void> {
    this.stopped = true;
    this.abort.abort();
    if (this.saveTimer) clearTimeout(this.saveTimer);
    this.saveTimer = null;
    this.droppedFrom = this.queue[0]?.seq;
    this.queue.splice(0);
    await Promise.race([this.worker ?? Promise.resolve(), sleep(options.graceMs)]);
    await this.running;
    if (options.save) await this.save();
  }
}

const pairKey = (pair: ConflictPair): string => [pair.entry.id, pair.other.id].sort().join(":");
