import { setTimeout as delay } from "node:timers/promises";
import { newId } from "../core/ids.js";
import { now } from "../core/time.js";
import type { AnnouncedChange, EventRow } from "../store/events.js";
import type { Store, Tx } from "../store/store.js";
import type { CustomEvent, EventRecord, ServerEvent } from "../wire/events.js";

/** An event as stored, with the audience fields live subscribers filter on. */
export interface BusEvent extends EventRecord {
  private_to: string | null;
  /** Only these agents may see it (messages: sender and recipients); null: no such limit. */
  audience: string[] | null;
}

export const toEventRecord = (row: EventRow): EventRecord => ({
  id: row.id,
  seq: row.seq,
  type: row.type,
  agent_id: row.agent_id,
  project: row.project,
  payload: JSON.parse(row.payload) as Record<string, unknown>,
  created_at: row.created_at,
});

const FOLLOW_PAGE = 500;
/**
 * The least time between the starts of two reads of the shared log by one process (a read that
 * finds a whole page goes on to the next at once). Events announced further apart are read as soon
 * as they are announced; closer ones wait out the gap and are read together, so a process reads
 * the log at most about 200 times a second however many servers write, where it read once per
 * other server's commit.
 */
const READ_GAP_MS = 5;

/**
 * Persists each event in the transaction of the change it describes, and hands it to live
 * subscribers only after that transaction commits, in seq order.
 *
 * Where this process is the only writer, a commit's events are handed on as they were made. Where
 * several processes share the store, every process follows the log instead: a wake-up (its own
 * commit, or the store's notice of anyone's) makes it read the events after the last it handed on,
 * so subscribers here see the other servers' events too, each once and in order.
 */
export class EventBus {
  private readonly listeners = new Set<(event: BusEvent) => void>();
  private delivered = 0;
  private following: Promise<void> | null = null;
  private again = false;
  private stopFollowing: (() => void) | null = null;
  private lastReadAt = -Infinity;
  private reads = 0;

  constructor(private readonly store: Store) {}

  /** Starts following the shared log, where there is one; resolves once listening. */
  async start(): Promise<void> {
    const wakeups = this.store.eventWakeups;
    if (!wakeups) return;
    this.delivered = await this.store.events.maxSeq(this.store.reader);
    this.stopFollowing = await wakeups.subscribe(() => this.wake());
  }

  /** Reads of the shared log this process has made (`cairn_event_log_reads_total`). */
  get logReads(): number {
    return this.reads;
  }

  stop(): void {
    this.stopFollowing?.();
    this.stopFollowing = null;
  }

  /** With `announces`, the memory entry whose change this is gets the event's seq as its `change_seq` (EventStore.insert). */
  emit(tx: Tx, event: ServerEvent, announces?: AnnouncedChange): Promise<BusEvent> {
    return this.persist(tx, event, announces);
  }

  /** A client's own event; the caller has checked that its type is outside the server's families. */
  emitCustom(tx: Tx, event: CustomEvent): Promise<BusEvent> {
    return this.persist(tx, event);
  }

  private async persist(tx: Tx, input: ServerEvent | CustomEvent, announces?: AnnouncedChange): Promise<BusEvent> {
    const row = {
      id: newId(),
      type: input.type,
      agent_id: input.agentId,
      project: input.project,
      private_to: input.privateTo ?? null,
      payload: JSON.stringify(input.payload),
      created_at: now(),
    };
    const seq = await this.store.events.insert(tx, row, input.audience, announces);
    const event: BusEvent = { ...row, seq, payload: input.payload as Record<string, unknown>, audience: input.audience ?? null };
    tx.afterCommit(() => (this.store.eventWakeups ? this.committed(event) : this.deliver(event)));
    return event;
  }

  /**
   * This process's own event, committed. Events commit in seq order, so when it is the next seq
   * after the last handed on and no read of the log is under way, nothing can come between: it is
   * handed on as made, without reading the log back. Otherwise the log is read as for anyone's.
   */
  private committed(event: BusEvent): void {
    if (this.following === null && event.seq === this.delivered + 1) {
      this.delivered = event.seq;
      this.deliver(event);
    } else {
      this.wake();
    }
  }

  subscribe(listener: (event: BusEvent) => void): () => void {
    this.listeners.add(listener);
    return () => this.listeners.delete(listener);
  }

  private deliver(event: BusEvent): void {
    for (const listener of this.listeners) listener(event);
  }

  /** Reads and hands on what the log has after the last delivered event; one reader at a time. */
  private wake(): void {
    if (this.following) {
      this.again = true;
      return;
    }
    this.following = this.follow()
      .catch(() => {
        // The store is closing, or unreachable for a moment: the next wake-up reads from the same point.
      })
      .finally(() => {
        this.following = null;
      });
  }

  private async follow(): Promise<void> {
    do {
      const gap = this.lastReadAt + READ_GAP_MS - performance.now();
      // Announcements arriving meanwhile set `again`, and this same read covers them.
      if (gap > 0) await delay(gap);
      this.again = false;
      for (;;) {
        if (!this.store.open) return;
        this.lastReadAt = performance.now();
        this.reads += 1;
        const rows = await this.store.events.since(this.store.reader, this.delivered, FOLLOW_PAGE);
        for (const row of rows) {
          this.delivered = row.seq;
          const { restricted: _restricted, audience, ...stored } = row;
          this.deliver({ ...stored, payload: JSON.parse(row.payload) as Record<string, unknown>, audience });
        }
        if (rows.length < FOLLOW_PAGE) break;
      }
    } while (this.again);
  }
}
