import type { ArchivistStore, LeaseRow, StateRow } from "../archivist.js";
import type { Reader, Tx } from "../store.js";
import type { SqlDb } from "./dialect.js";

const NEVER_HELD: LeaseRow = { holder: null, token: 0, acquired_at: null, expires_at: null };

export class SqlArchivist implements ArchivistStore {
  constructor(private readonly db: SqlDb) {}

  // The row is there from the first migration on. Read in a transaction, it is locked until that
  // transaction ends: the caller decides the next lease from it, and two servers granting one at
  // once must not both see it free.
  async lease(r: Reader): Promise<LeaseRow> {
    const row = await this.db.get<LeaseRow>(r, `SELECT l.holder, l.token, l.acquired_at, l.expires_at FROM archivist_lease l WHERE l.id = 1${this.db.dialect.lockRows(r, "l")}`);
    return row ?? { ...NEVER_HELD };
  }

  async saveLease(tx: Tx, lease: LeaseRow): Promise<void> {
    await this.db.run(
      tx,
      `INSERT INTO archivist_lease (id, holder, token, acquired_at, expires_at) VALUES (1, ?, ?, ?, ?)
     ON CONFLICT (id) DO UPDATE SET holder = excluded.holder, token = excluded.token,
       acquired_at = excluded.acquired_at, expires_at = excluded.expires_at`,
      lease.holder, lease.token, lease.acquired_at, lease.expires_at,
    );
  }

  state(r: Reader, key: string): Promise<StateRow | undefined> {
    return this.db.get<StateRow>(r, "SELECT key, value, updated_at FROM archivist_state WHERE key = ?", key);
  }

  async putState(tx: Tx, row: StateRow): Promise<void> {
    await this.db.run(
      tx,
      `INSERT INTO archivist_state (key, value, updated_at) VALUES (?, ?, ?)
     ON CONFLICT (key) DO UPDATE SET value = excluded.value, updated_at = excluded.updated_at`,
      row.key, row.value, row.updated_at,
    );
  }

  async countState(r: Reader): Promise<number> {
    return (await this.db.get<{ n: number }>(r, "SELECT count(*) AS n FROM archivist_state"))?.n ?? 0;
  }
}
