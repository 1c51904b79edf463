import { rowColumns } from "./row-columns.js";
import type { Reader, Tx } from "./store.js";

export interface LeaseRow {
  holder: string | null;
  token: number;
  acquired_at: string | null;
  expires_at: string | null;
}

/** `id` is left out: the table's one row is always 1. */
export const LEASE_ROW_COLUMNS = rowColumns<LeaseRow>("archivist_lease", { holder: true, token: true, acquired_at: true, expires_at: true }, ["id"]);

export interface StateRow {
  key: string;
  value: string;
  updated_at: string;
}

export const STATE_ROW_COLUMNS = rowColumns<StateRow>("archivist_state", { key: true, value: true, updated_at: true });

/** The archivist's lease (one row) and its key-value state. */
export interface ArchivistStore {
  /** The lease; never held (token 0) until first taken. */
  lease(r: Reader): Promise<LeaseRow>;
  saveLease(tx: Tx, lease: LeaseRow): Promise<void>;
  state(r: Reader, key: string): Promise<StateRow | undefined>;
  putState(tx: Tx, row: StateRow): Promise<void>;
  countState(r: Reader): Promise<number>;
}
