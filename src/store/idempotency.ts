import type { Reader, Tx } from "./store.js";

export interface IdempotencyRow {
  request_hash: string;
  status: number;
  body: string | null;
  headers: string;
}

export interface IdempotencyStore {
  find(r: Reader, agentId: string, key: string): Promise<IdempotencyRow | undefined>;
  /** Keeps the first response stored under the key; a later one is ignored. */
  save(tx: Tx, agentId: string, key: string, response: IdempotencyRow, at: string): Promise<void>;
  prune(tx: Tx, before: string): Promise<number>;
}
