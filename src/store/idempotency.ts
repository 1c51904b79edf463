import type { Reader, Tx } from "./store.js";

/** A response kept for an `Idempotency-Key`; status 0 while the first request with the key still runs. */
export interface IdempotencyRow {
  request_hash: string;
  status: number;
  body: string | null;
  headers: string;
  created_at: string;
}

export interface IdempotencyStore {
  find(r: Reader, agentId: string, key: string): Promise<IdempotencyRow | undefined>;
  /**
   * Claims the key for a request about to run (a row with status 0); false when the key is taken,
   * by a stored response or by a request still running (on this server or another).
   */
  reserve(tx: Tx, agentId: string, key: string, requestHash: string, at: string): Promise<boolean>;
  /**
   * Takes over a reservation whose request has not finished since `staleBefore` (its server
   * stopped); true when this caller now holds it.
   */
  takeOver(tx: Tx, agentId: string, key: string, staleBefore: string, at: string): Promise<boolean>;
  /** Stores the answer of the reserved request. */
  complete(tx: Tx, agentId: string, key: string, response: Omit<IdempotencyRow, "request_hash" | "created_at">): Promise<void>;
  /** Gives a reservation up without an answer (the request failed in a way a retry should repeat). */
  release(tx: Tx, agentId: string, key: string): Promise<void>;
  prune(tx: Tx, before: string): Promise<number>;
}
