import { newId } from "../core/ids.js";
import { now } from "../core/time.js";
import type { EventRow, EventStore } from "../store/events.js";
import type { Tx } from "../store/store.js";
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

/**
 * Persists each event in the transaction of the change it describes, and hands it to live
 * subscribers only after that transaction commits.
 */
export class EventBus {
  private readonly listeners = new Set<(event: BusEvent) => void>();

  constructor(private readonly events: EventStore) {}

  emit(tx: Tx, event: ServerEvent): Promise<BusEvent> {
    return this.persist(tx, event);
  }

  /** A client's own event; the caller has checked that its type is outside the server's families. */
  emitCustom(tx: Tx, event: CustomEvent): Promise<BusEvent> {
    return this.persist(tx, event);
  }

  private async persist(tx: Tx, input: ServerEvent | CustomEvent): Promise<BusEvent> {
    const row = {
      id: newId(),
      type: input.type,
      agent_id: input.agentId,
      project: input.project,
      private_to: input.privateTo ?? null,
      payload: JSON.stringify(input.payload),
      created_at: now(),
    };
    const seq = await this.events.insert(tx, row, input.audience);
    const event: BusEvent = { ...row, seq, payload: input.payload as Record<string, unknown>, audience: input.audience ?? null };
    tx.afterCommit(() => {
      for (const listener of this.listeners) listener(event);
    });
    return event;
  }

  subscribe(listener: (event: BusEvent) => void): () => void {
    this.listeners.add(listener);
    return () => this.listeners.delete(listener);
  }
}
