import type { Reader, Tx } from "./store.js";

export interface StoredResponse {
  request_hash: string;
  status: number;
  body: string | null;
  headers: string;
}

export interface IdempotencyStore {
  find(r: Reader, agentId: string, key: string): Promise<StoredResponse | undefined>;
  /** Keeps the first response stored under the key; a later one is ignored. */
  save(tx: Tx, agentId: string, key: string, response: StoredResponse, at: string): Promise<void>;
  prune(tx: Tx, before: string): Promise<number>;
}
