import type { Reader, Tx } from "../store.js";
import type { UiSessionRow, UiSessionStore } from "../ui-sessions.js";
import type { SqlDb } from "./dialect.js";

export class SqlUiSessions implements UiSessionStore {
  constructor(private readonly db: SqlDb) {}

  async insert(tx: Tx, row: UiSessionRow): Promise<void> {
    await this.db.run(
      tx,
      "INSERT INTO ui_sessions (token_hash, agent_id, created_at, last_used_at) VALUES (?, ?, ?, ?)",
      row.token_hash,
      row.agent_id,
      row.created_at,
      row.last_used_at,
    );
  }

  byHash(r: Reader, hash: Buffer): Promise<UiSessionRow | undefined> {
    return this.db.get<UiSessionRow>(r, "SELECT * FROM ui_sessions WHERE token_hash = ?", hash);
  }

  async touch(tx: Tx, hash: Buffer, at: string): Promise<void> {
    await this.db.run(tx, "UPDATE ui_sessions SET last_used_at = ? WHERE token_hash = ?", at, hash);
  }

  delete(tx: Tx, hash: Buffer): Promise<number> {
    return this.db.run(tx, "DELETE FROM ui_sessions WHERE token_hash = ?", hash);
  }

  deleteIdle(tx: Tx, usedBefore: string): Promise<number> {
    return this.db.run(tx, "DELETE FROM ui_sessions WHERE last_used_at < ?", usedBefore);
  }

  async insertLoginLink(tx: Tx, hash: Buffer, createdAt: string, expiresAt: string): Promise<void> {
    await this.db.run(tx, "INSERT INTO ui_login_links (token_hash, created_at, expires_at) VALUES (?, ?, ?)", hash, createdAt, expiresAt);
  }

  // Two servers taking one link: the second's delete waits for the first's, then finds no row.
  async takeLoginLink(tx: Tx, hash: Buffer, at: string): Promise<boolean> {
    return (await this.db.run(tx, "DELETE FROM ui_login_links WHERE token_hash = ? AND expires_at > ?", hash, at)) === 1;
  }

  async loginLinkIsLive(r: Reader, hash: Buffer, at: string): Promise<boolean> {
    return (await this.db.get<{ live: number }>(r, "SELECT 1 AS live FROM ui_login_links WHERE token_hash = ? AND expires_at > ?", hash, at)) !== undefined;
  }

  deleteExpiredLoginLinks(tx: Tx, at: string): Promise<number> {
    return this.db.run(tx, "DELETE FROM ui_login_links WHERE expires_at <= ?", at);
  }
}
