import type { Reader, Tx } from "./store.js";

/** Small named values the whole installation shares (this instance's id, the secret key's check value). */
export interface MetaStore {
  get(r: Reader, key: string): Promise<string | undefined>;
  /**
   * Stores `value` under `key` unless a value is there already, and returns the value that is
   * there now: of several servers starting together, the first to commit decides for all.
   */
  claim(tx: Tx, key: string, value: string): Promise<string>;
}
