import type { Reader, Tx } from "./store.js";

export interface LeaseRow {
  holder: string | null;
  token: number;
  acquired_at: string | null;
  expires_at: string | null;
}

export interface StateRow {
  key: string;
  value: string;
  updated_at: string;
}

/** The archivist's lease (one row) and its key-value state. */
export interface ArchivistStore {
  /** The lease; never held (token 0) until first taken. */
  lease(r: Reader): Promise<LeaseRow>;
  saveLease(tx: Tx, lease: LeaseRow): Promise<void>;
  state(r: Reader, key: string): Promise<StateRow | undefined>;
  putState(tx: Tx, row: StateRow): Promise<void>;
  countState(r: Reader): Promise<number>;
}
