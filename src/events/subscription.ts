import type { Db } from "../store/db.js";
import { listEvents, maxEventSeq, prunedThrough, type EventFilters } from "../store/events.js";
import { memberProjectIds, type Viewer } from "../store/visibility.js";
import { toEventRecord, type BusEvent, type EventBus, type EventRecord } from "./bus.js";

export interface SubscriptionOptions {
  viewer: Viewer;
  filters: EventFilters;
  /** Resume after this seq (Last-Event-ID); absent: only events from now on. */
  afterSeq?: number | undefined;
  /** Live events a subscriber may fall behind by before it is cut off. */
  queueLimit: number;
}

export type EndReason = "overflow" | "closed" | "identity";

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
  private readonly live: BusEvent[] = [];
  private memberOf: Set<string>;
  private readonly unsubscribe: () => void;
  private ended: EndReason | null = null;
  private notify: (() => void) | null = null;
  private endListeners: ((reason: EndReason) => void)[] = [];

  constructor(
    private readonly db: Db,
    bus: EventBus,
    private readonly options: SubscriptionOptions,
  ) {
    const newest = maxEventSeq(db);
    const requested = options.afterSeq;
    this.reset = requested !== undefined && (requested < prunedThrough(db) || requested > newest);
    // A resume point from the future (a restored database) cannot be honoured: go live from now.
    this.cursor = requested === undefined || requested > newest ? newest : requested;
    this.replaying = this.cursor < newest;
    this.memberOf = new Set(memberProjectIds(db, options.viewer.agentId));
    this.unsubscribe = bus.subscribe((event) => this.receive(event));
  }

  get endReason(): EndReason | null {
    return this.ended;
  }

  /** Called (once per wake-up) when `next()` has something, or the subscription ended. */
  onReady(callback: () => void): void {
    this.notify = callback;
  }

  onEnd(listener: (reason: EndReason) => void): void {
    this.endListeners.push(listener);
  }

  /** Up to `max` events, in seq order; empty when nothing is ready (wait for `onReady`). */
  next(max: number): EventRecord[] {
    if (this.ended) return [];
    if (this.replaying) {
      const rows = listEvents(this.db, this.options.viewer, { afterSeq: this.cursor }, this.options.filters, Math.min(max, REPLAY_PAGE));
      const last = rows.at(-1);
      if (last) {
        this.cursor = last.seq;
        return rows.map(toEventRecord);
      }
      // Caught up: everything committed so far has been read; later commits arrive live.
      this.replaying = false;
      this.live.length = 0;
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
    const me = this.options.viewer.agentId;
    // The subscriber's own identity changed: its credentials no longer name it.
    if ((event.type === "agent.renamed" && event.payload.from === me) || (event.type === "agent.deleted" && event.payload.agent_id === me)) {
      this.end("identity");
      return;
    }
    if (event.type.startsWith("project.") && event.agent_id === me) this.memberOf = new Set(memberProjectIds(this.db, me));
    if (this.replaying || event.seq <= this.cursor || !this.visible(event)) return;
    if (!matchesType(this.options.filters.type, event.type)) return;
    if (this.options.filters.agent !== undefined && event.agent_id !== this.options.filters.agent) return;
    if (this.live.length >= this.options.queueLimit) {
      this.end("overflow");
      return;
    }
    this.live.push(event);
    if (this.live.length === 1) this.notify?.();
  }

  /** The rule of `visibleEvent` (store/visibility.ts), for an event that has not been read back. */
  private visible(event: BusEvent): boolean {
    const { viewer } = this.options;
    if (event.private_to !== null && event.private_to !== viewer.agentId) return false;
    if (event.project !== null && !viewer.allProjects && !this.memberOf.has(event.project)) return false;
    return event.audience === null || event.audience.includes(viewer.agentId);
  }
}

const strip = ({ private_to: _private, audience: _audience, ...record }: BusEvent): EventRecord => record;
