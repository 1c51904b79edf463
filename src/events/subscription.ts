import type { EventFilters, EventRow } from "../store/events.js";
import type { Store } from "../store/store.js";
import type { Viewpoint } from "../store/visibility.js";
import type { EventRecord } from "../wire/events.js";
import { toEventRecord, type BusEvent, type EventBus } from "./bus.js";

export interface SubscriptionOptions {
  viewpoint: Viewpoint;
  filters: EventFilters;
  /** Resume after this seq (Last-Event-ID); absent: only events from now on. */
  afterSeq?: number | undefined;
  /** Live events a subscriber may fall behind by before it is cut off. */
  queueLimit: number;
}

export type EndReason = "overflow" | "closed" | "identity";

/** What `open` read before the subscription could start. */
interface Start {
  reset: boolean;
  cursor: number;
  replaying: boolean;
  memberOf: string[];
}

const REPLAY_PAGE = 500;

export const matchesType = (pattern: string | undefined, type: string): boolean =>
  pattern === undefined || (pattern.endsWith(".*") ? type.startsWith(pattern.slice(0, -1)) : type === pattern);

/**
 * One subscriber's view of the event log: first what it missed (read from the table page by page
 * as it is consumed), then live events, with no gap and no duplicate, only events it may see.
 *
 * Pull-based, so a transport sends only as fast as its client reads: `next()` hands out what is
 * ready, `onReady` says when more is. While the subscriber replays, live events are ignored (they
 * are in the table and the replay reaches them); once a replay read comes back empty it switches
 * to live. Live events queue up to `queueLimit`; past that the subscription ends with "overflow",
 * so a slow client is cut off and reconnects to replay, rather than being starved silently.
 */
export class EventSubscription {
  /** The requested resume point is older than retention: the client missed events for good. */
  readonly reset: boolean;
  private cursor: number;
  private replaying: boolean;
  /**
   * A replay read is in flight. An event committed while it runs may be missing from it, so such
   * events are kept: were this read the last, they are the first live ones.
   */
  private reading = false;
  private readonly live: BusEvent[] = [];
  private readonly memberOf: Set<string>;
  private ended: EndReason | null = null;
  private notify: (() => void) | null = null;
  private endListeners: ((reason: EndReason) => void)[] = [];
  /** The pull in progress: pulls run one at a time, so none reads a page another already handed out. */
  private pulling: Promise<unknown> = Promise.resolve();

  /**
   * Subscribes to the bus before reading where the log stands: an event committed during the reads
   * is either at or below the newest seq read (skipped, or reached by the replay) or is held here
   * and judged once the subscription exists, so none falls between the reads and the subscribing.
   */
  static async open(store: Store, bus: EventBus, options: SubscriptionOptions): Promise<EventSubscription> {
    const early: BusEvent[] = [];
    let opened: EventSubscription | null = null;
    const unsubscribe = bus.subscribe((event) => {
      if (opened) opened.receive(event);
      else early.push(event);
    });
    let start: Start;
    try {
      const newest = await store.events.maxSeq(store.reader);
      const requested = options.afterSeq;
      const reset = requested !== undefined && (requested < (await store.events.prunedThrough(store.reader)) || requested > newest);
      // A resume point from the future (a restored database) cannot be honoured: go live from now.
      const cursor = requested === undefined || requested > newest ? newest : requested;
      const memberOf = await store.projects.projectsOf(store.reader, options.viewpoint.agentId);
      start = { reset, cursor, replaying: cursor < newest, memberOf };
    } catch (error) {
      unsubscribe();
      throw error;
    }
    const subscription = new EventSubscription(store, options, unsubscribe, start);
    opened = subscription;
    for (const event of early) subscription.receive(event);
    return subscription;
  }

  private constructor(
    private readonly store: Store,
    private readonly options: SubscriptionOptions,
    private readonly unsubscribe: () => void,
    start: Start,
  ) {
    this.reset = start.reset;
    this.cursor = start.cursor;
    this.replaying = start.replaying;
    this.memberOf = new Set(start.memberOf);
  }

  get endReason(): EndReason | null {
    return this.ended;
  }

  /** Called (once per wake-up) when `next()` has something, or the subscription ended. */
  onReady(callback: () => void): void {
    this.notify = callback;
  }

  /** A listener added after the end (the subscriber's identity ended while it opened) is called at once. */
  onEnd(listener: (reason: EndReason) => void): void {
    if (this.ended) {
      listener(this.ended);
      return;
    }
    this.endListeners.push(listener);
  }

  /** Up to `max` events, in seq order; empty when nothing is ready (wait for `onReady`). */
  next(max: number): Promise<EventRecord[]> {
    const pulled = this.pulling.then(() => this.pull(max));
    this.pulling = pulled.catch(() => undefined);
    return pulled;
  }

  private async pull(max: number): Promise<EventRecord[]> {
    if (this.ended) return [];
    if (this.replaying) {
      // What arrived before this read is in the table for it to find.
      this.live.length = 0;
      this.reading = true;
      let rows: EventRow[];
      try {
        rows = await this.store.events.list(this.store.reader, this.options.viewpoint, { afterSeq: this.cursor }, this.options.filters, Math.min(max, REPLAY_PAGE));
      } finally {
        // In the same step as the switch to live below, so no event arrives between the two.
        this.reading = false;
      }
      if (this.ended) return [];
      const last = rows.at(-1);
      if (last) {
        this.cursor = last.seq;
        return rows.map(toEventRecord);
      }
      // Caught up: everything committed before the read has been read; what committed during it
      // was kept, and later commits arrive live.
      this.replaying = false;
    }
    const ready: EventRecord[] = [];
    while (ready.length < max && this.live.length > 0) {
      const event = this.live.shift() as BusEvent;
      if (event.seq <= this.cursor) continue;
      this.cursor = event.seq;
      ready.push(strip(event));
    }
    return ready;
  }

  end(reason: EndReason = "closed"): void {
    if (this.ended) return;
    this.ended = reason;
    this.unsubscribe();
    this.live.length = 0;
    for (const listener of this.endListeners) listener(reason);
    this.notify?.();
  }

  private receive(event: BusEvent): void {
    const me = this.options.viewpoint.agentId;
    // The subscriber's own identity changed: its credentials no longer name it.
    if ((event.type === "agent.renamed" && event.payload.from === me) || (event.type === "agent.deleted" && event.payload.agent_id === me)) {
      this.end("identity");
      return;
    }
    this.followMembership(event, me);
    if ((this.replaying && !this.reading) || event.seq <= this.cursor || !this.visible(event)) return;
    if (!matchesType(this.options.filters.type, event.type)) return;
    if (this.options.filters.agent !== undefined && event.agent_id !== this.options.filters.agent) return;
    if (this.replaying) {
      // Kept for the replay read in flight (see `reading`); it hands them out if it comes back empty.
      this.live.push(event);
      return;
    }
    if (this.live.length >= this.options.queueLimit) {
      this.end("overflow");
      return;
    }
    this.live.push(event);
    if (this.live.length === 1) this.notify?.();
  }

  /**
   * The subscriber's memberships, kept from its own project events, so the events after one in the
   * same fan-out are judged by the membership it made. Creating a project joins its creator in the
   * same transaction (an imported project joins nobody).
   */
  private followMembership(event: BusEvent, me: string): void {
    const { payload } = event;
    if (typeof payload.project !== "string") return;
    const joined =
      (event.type === "project.joined" && payload.agent_id === me) ||
      (event.type === "project.created" && event.agent_id === me && payload.owner === me && payload.reason !== "imported");
    if (joined) this.memberOf.add(payload.project);
    else if (event.type === "project.left" && payload.agent_id === me) this.memberOf.delete(payload.project);
  }

  /** The rule of `visibleEvent` (store/sql/visibility.ts), for an event that has not been read back. */
  private visible(event: BusEvent): boolean {
    const { viewpoint } = this.options;
    if (event.private_to !== null && event.private_to !== viewpoint.agentId) return false;
    if (event.project !== null && !viewpoint.allProjects && !this.memberOf.has(event.project)) return false;
    return event.audience === null || event.audience.includes(viewpoint.agentId);
  }
}

const strip = ({ private_to: _private, audience: _audience, ...record }: BusEvent): EventRecord => record;
