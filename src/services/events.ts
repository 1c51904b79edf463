import { checkByteSize } from "../core/byte-size.js";
import { AppError, invalid } from "../core/errors.js";
import type { Store } from "../store/store.js";
import { toEventRecord, type EventBus } from "../events/bus.js";
import { EventSubscription, matchesType } from "../events/subscription.js";
import { SERVER_EVENT_TYPES, type EventRecord } from "../wire/events.js";
import { checkProjectWrite } from "./access.js";
import { viewpointOf, type Caller } from "./caller.js";
import { decodeCursor, pageOf, type Page } from "./paging.js";
import type { Presence } from "./presence.js";
import { redactJson } from "./redaction.js";

/** Where a listing starts: right after event `seq`, or after the time `at` (normalised RFC 3339). */
export type EventPoint = { seq: number } | { at: string };

export interface EventQuery {
  since: EventPoint;
  /** `desc`: newest first, each page continuing below the last (default `asc`). */
  order?: "asc" | "desc" | undefined;
  type?: string | undefined;
  agent?: string | undefined;
  cursor?: string | undefined;
  limit: number;
}

export interface StreamRequest {
  type?: string | undefined;
  agent?: string | undefined;
  /** Resume after this seq (the SSE Last-Event-ID). */
  lastEventId?: number | undefined;
}

export interface WaitRequest {
  /** Exact types or families (`task.*`); empty: any type. */
  types: string[];
  timeoutSeconds: number;
  afterSeq?: number | undefined;
}

export interface CustomEvent {
  type: string;
  payload: Record<string, unknown>;
  project?: string | null | undefined;
}

/** Families the server itself emits (those of its typed events): nobody may forge them, but the archivist its own. */
const SERVER_FAMILIES = [...new Set(SERVER_EVENT_TYPES.map((type) => type.slice(0, type.indexOf("."))))];
const MAX_PAYLOAD_BYTES = 16_384;
/** Open streams one agent may hold at once (each is a connection and a subscription). */
const MAX_STREAMS_PER_AGENT = 16;
const PRUNE_BATCH = 5_000;

const startOf = (point: EventPoint): { afterSeq: number } | { since: string } => ("seq" in point ? { afterSeq: point.seq } : { since: point.at });

const isSeq = (value: unknown): value is number => Number.isSafeInteger(value) && (value as number) >= 0;

export class EventService {
  constructor(
    private readonly store: Store,
    private readonly bus: EventBus,
    private readonly presence: Presence,
    /** Live events a stream may fall behind by before it is cut off. */
    private readonly streamQueueLimit: number,
  ) {}

  async list(caller: Caller, query: EventQuery): Promise<Page<EventRecord>> {
    const cursorSeq = decodeCursor(query.cursor, isSeq);
    if (query.order === "desc") {
      const rows = await this.store.events.list(this.store.reader, viewpointOf(caller), startOf(query.since), query, query.limit + 1, cursorSeq ?? Number.MAX_SAFE_INTEGER);
      return pageOf(rows, query.limit, toEventRecord, (row) => row.seq);
    }
    const start = cursorSeq === null ? startOf(query.since) : { afterSeq: cursorSeq };
    const rows = await this.store.events.list(this.store.reader, viewpointOf(caller), start, query, query.limit + 1);
    return pageOf(rows, query.limit, toEventRecord, (row) => row.seq);
  }

  /** A live subscription; the caller counts as online until it ends. */
  async subscribe(caller: Caller, request: StreamRequest): Promise<EventSubscription> {
    if (this.presence.connections(caller.agentId) >= MAX_STREAMS_PER_AGENT) {
      throw new AppError("RATE_LIMITED", `at most ${MAX_STREAMS_PER_AGENT} open event streams per agent`, { retryAfter: 5 });
    }
    // Counted before the subscription is opened, so streams opening at the same time cannot all pass the check.
    const disconnect = this.presence.connect(caller.agentId);
    let subscription: EventSubscription;
    try {
      subscription = await EventSubscription.open(this.store, this.bus, {
        viewpoint: viewpointOf(caller),
        filters: { type: request.type, agent: request.agent },
        afterSeq: request.lastEventId,
        queueLimit: this.streamQueueLimit,
      });
    } catch (error) {
      disconnect();
      throw error;
    }
    subscription.onEnd(disconnect);
    return subscription;
  }

  /** The first visible event of `types` after `afterSeq` (default: now), or null at the timeout. */
  async wait(caller: Caller, request: WaitRequest): Promise<EventRecord | null> {
    const subscription = await EventSubscription.open(this.store, this.bus, {
      viewpoint: viewpointOf(caller),
      filters: {},
      afterSeq: request.afterSeq,
      queueLimit: this.streamQueueLimit,
    });
    const wanted = (type: string): boolean => request.types.length === 0 || request.types.some((pattern) => matchesType(pattern, type));
    return new Promise((resolve, reject) => {
      let settled = false;
      const settle = (answer: () => void): void => {
        if (settled) return;
        settled = true;
        clearTimeout(timer);
        answer();
        // Ending wakes `look` once more; `settled` keeps that from answering again.
        subscription.end();
      };
      const finish = (event: EventRecord | null): void => settle(() => resolve(event));
      // Wake-ups may overlap; the subscription hands each event to one of them, in order.
      const look = async (): Promise<void> => {
        for (;;) {
          const batch = await subscription.next(500);
          if (batch.length === 0) break;
          const found = batch.find((event) => wanted(event.type));
          if (found) return finish(found);
        }
        // Reading on every wake-up, it cannot fall behind; were it cut off, answer as a timeout.
        if (subscription.endReason !== null) return finish(null);
      };
      const lookOrFail = (): void => {
        look().catch((error: unknown) => settle(() => reject(error instanceof Error ? error : new Error(String(error)))));
      };
      const timer = setTimeout(() => finish(null), request.timeoutSeconds * 1000);
      subscription.onReady(lookOrFail);
      lookOrFail();
    });
  }

  /** A custom event: any type outside the server's own families, into a project the caller is in. */
  async emit(caller: Caller, input: CustomEvent): Promise<EventRecord> {
    const family = input.type.split(".")[0] ?? "";
    if (SERVER_FAMILIES.includes(family) && !(family === "archivist" && caller.role === "archivist")) {
      throw invalid("type", `${family}.* events are emitted by the server itself`);
    }
    checkByteSize(JSON.stringify(input.payload), MAX_PAYLOAD_BYTES, "payload exceeds");
    // No secret in an event (CONTRACT §1.1): every listener and the audit log would keep it.
    const payload = (await redactJson(input.payload)) as Record<string, unknown>;
    checkByteSize(JSON.stringify(payload), MAX_PAYLOAD_BYTES, "payload exceeds");
    const project = input.project ?? null;
    return this.store.transaction(async (tx) => {
      await checkProjectWrite(this.store.projects, tx, caller, project);
      const event = await this.bus.emitCustom(tx, { type: input.type, agentId: caller.agentId, project, payload });
      return { id: event.id, seq: event.seq, type: event.type, agent_id: event.agent_id, project: event.project, payload: event.payload, created_at: event.created_at };
    });
  }

  /** Retention: removes events created before `before`, a batch per transaction. */
  async prune(before: string): Promise<number> {
    let total = 0;
    for (;;) {
      const removed = await this.store.transaction((tx) => this.store.events.pruneBatch(tx, before, PRUNE_BATCH));
      total += removed;
      if (removed < PRUNE_BATCH) return total;
    }
  }
}
