import type { ArchivistStore, LeaseRow, StateRow } from "../archivist.js";
import type { Reader, Tx } from "../store.js";
import { connectionOf, isTx } from "./transactions.js";

export class PgArchivist implements ArchivistStore {
  // The row is there from the first migration on. Read in a transaction, it is locked until that
  // transaction ends: the caller decides the next lease from it, and two servers granting one at
  // once must not both see it free.
  async lease(r: Reader): Promise<LeaseRow> {
    const db = connectionOf(r);
    const lock = isTx(r) ? " FOR UPDATE" : "";
    return (
      (await db.get<LeaseRow>(`SELECT holder, token, acquired_at, expires_at FROM archivist_lease WHERE id = 1${lock}`)) ?? {
        holder: null,
        token: 0,
        acquired_at: null,
        expires_at: null,
      }
    );
  }

  async saveLease(tx: Tx, lease: LeaseRow): Promise<void> {
    const db = connectionOf(tx);
    await db.run(
      `INSERT INTO archivist_lease (id, holder, token, acquired_at, expires_at) VALUES (1, ?, ?, ?, ?)
     ON CONFLICT (id) DO UPDATE SET holder = excluded.holder, token = excluded.token,
       acquired_at = excluded.acquired_at, expires_at = excluded.expires_at`,
      lease.holder,
      lease.token,
      lease.acquired_at,
      lease.expires_at,
    );
  }

  async state(r: Reader, key: string): Promise<StateRow | undefined> {
    const db = connectionOf(r);
    return db.get<StateRow>("SELECT key, value, updated_at FROM archivist_state WHERE key = ?", key);
  }

  async putState(tx: Tx, row: StateRow): Promise<void> {
    const db = connectionOf(tx);
    await db.run(
      `INSERT INTO archivist_state (key, value, updated_at) VALUES (?, ?, ?)
     ON CONFLICT (key) DO UPDATE SET value = excluded.value, updated_at = excluded.updated_at`,
      row.key,
      row.value,
      row.updated_at,
    );
  }

  async countState(r: Reader): Promise<number> {
    const db = connectionOf(r);
    return (await db.get<{ n: number }>("SELECT count(*) AS n FROM archivist_state"))?.n ?? 0;
  }
}
