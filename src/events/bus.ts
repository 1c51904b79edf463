import { newId } from "../core/ids.js";
import { now } from "../core/time.js";
import type { Db } from "../store/db.js";
import { insertEvent, type EventRow } from "../store/events.js";

export interface EventRecord {
  id: string;
  seq: number;
  type: string;
  agent_id: string;
  project: string | null;
  payload: Record<string, unknown>;
  created_at: string;
}

/** An event as stored, with the audience fields live subscribers filter on. */
export interface BusEvent extends EventRecord {
  private_to: string | null;
  /** Only these agents may see it (messages: sender and recipients); null: no such limit. */
  audience: string[] | null;
}

export interface EmitInput {
  type: string;
  agentId: string;
  project: string | null;
  /** Only this agent may see the event (events about private entries). */
  privateTo?: string | null;
  /** Only these agents may see the event (a message's sender and recipients). */
  audience?: string[];
  payload: Record<string, unknown>;
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

/**
 * Persists each event in the transaction of the change it describes, and hands it to live
 * subscribers only after that transaction commits.
 */
export class EventBus {
  private readonly listeners = new Set<(event: BusEvent) => void>();
  private readonly guards: (() => void)[] = [];

  constructor(private readonly db: Db) {}

  emit(input: EmitInput): BusEvent {
    if (!this.db.inTransaction) throw new Error("events are emitted inside the transaction of their change");
    for (const guard of this.guards) guard();
    const row = {
      id: newId(),
      type: input.type,
      agent_id: input.agentId,
      project: input.project,
      private_to: input.privateTo ?? null,
      payload: JSON.stringify(input.payload),
      created_at: now(),
    };
    const seq = insertEvent(this.db, row, input.audience);
    const event: BusEvent = { ...row, seq, payload: input.payload, audience: input.audience ?? null };
    this.db.afterCommit(() => {
      for (const listener of this.listeners) listener(event);
    });
    return event;
  }

  /**
   * `guard` runs before every event is written, inside the change's transaction: throwing from it
   * rolls the change back. It sees only writes that emit an event: heartbeats, presence, lease
   * extensions, read counters, the memory cursor and the idempotency store emit none, so a write
   * that must be guarded without an event (archivist state, logs) checks for itself.
   */
  addGuard(guard: () => void): void {
    this.guards.push(guard);
  }

  subscribe(listener: (event: BusEvent) => void): () => void {
    this.listeners.add(listener);
    return () => this.listeners.delete(listener);
  }
}
