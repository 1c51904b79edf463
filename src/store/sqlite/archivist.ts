import type { Db } from "./db.js";

export interface LeaseRow {
  holder: string | null;
  token: number;
  acquired_at: string | null;
  expires_at: string | null;
}

export const currentLease = (db: Db): LeaseRow =>
  db.get<LeaseRow>("SELECT holder, token, acquired_at, expires_at FROM archivist_lease WHERE id = 1") ?? {
    holder: null,
    token: 0,
    acquired_at: null,
    expires_at: null,
  };

export function saveLease(db: Db, lease: LeaseRow): void {
  db.run(
    `INSERT INTO archivist_lease (id, holder, token, acquired_at, expires_at) VALUES (1, ?, ?, ?, ?)
     ON CONFLICT (id) DO UPDATE SET holder = excluded.holder, token = excluded.token,
       acquired_at = excluded.acquired_at, expires_at = excluded.expires_at`,
    lease.holder,
    lease.token,
    lease.acquired_at,
    lease.expires_at,
  );
}

export interface StateRow {
  key: string;
  value: string;
  updated_at: string;
}

export const getState = (db: Db, key: string): StateRow | undefined =>
  db.get<StateRow>("SELECT key, value, updated_at FROM archivist_state WHERE key = ?", key);

export function putState(db: Db, row: StateRow): void {
  db.run(
    `INSERT INTO archivist_state (key, value, updated_at) VALUES (?, ?, ?)
     ON CONFLICT (key) DO UPDATE SET value = excluded.value, updated_at = excluded.updated_at`,
    row.key,
    row.value,
    row.updated_at,
  );
}

export const countState = (db: Db): number => db.get<{ n: number }>("SELECT count(*) AS n FROM archivist_state")?.n ?? 0;
