import { rowColumns } from "./row-columns.js";
import type { Reader, Tx } from "./store.js";

/** A response kept for an `Idempotency-Key`; status 0 while the change made under it has no answer stored. */
export interface IdempotencyRow {
  request_hash: string;
  status: number;
  body: string | null;
  headers: string;
  created_at: string;
}

/** `agent_id` and `key` are what a row is found by. */
export const IDEMPOTENCY_ROW_COLUMNS = rowColumns<IdempotencyRow>(
  "idempotency",
  { request_hash: true, status: true, body: true, headers: true, created_at: true },
  ["agent_id", "key"],
);

/** An answer as stored: status 0 for a change made under the key whose answer is not (yet) known. */
export type IdempotencyReply = Pick<IdempotencyRow, "status" | "body" | "headers">;

export interface IdempotencyStore {
  find(r: Reader, agentId: string, key: string): Promise<IdempotencyRow | undefined>;
  /**
   * Writes the key's row, in the transaction of the request's change (or, for a request that
   * changed nothing, of its answer alone); false when another request's row holds the key. Of two
   * transactions claiming one key at once, the second waits for the first to end, then finds it.
   */
  claim(tx: Tx, agentId: string, key: string, requestHash: string, reply: IdempotencyReply, at: string): Promise<boolean>;
  /** Replaces the answer in the key's row (a later transaction of the request that claimed it). */
  update(tx: Tx, agentId: string, key: string, reply: IdempotencyReply): Promise<void>;
  prune(tx: Tx, before: string): Promise<number>;
}
