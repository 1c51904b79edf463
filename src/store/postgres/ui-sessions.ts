import type { Reader, Tx } from "../store.js";
import type { UiSessionRow, UiSessionStore } from "../ui-sessions.js";
import { connectionOf } from "./transactions.js";

export class PgUiSessions implements UiSessionStore {
  async insert(tx: Tx, row: UiSessionRow): Promise<void> {
    const db = connectionOf(tx);
    await db.run(
      "INSERT INTO ui_sessions (token_hash, agent_id, created_at, last_used_at) VALUES (?, ?, ?, ?)",
      row.token_hash,
      row.agent_id,
      row.created_at,
      row.last_used_at,
    );
  }

  async byHash(r: Reader, hash: Buffer): Promise<UiSessionRow | undefined> {
    const db = connectionOf(r);
    return db.get<UiSessionRow>("SELECT * FROM ui_sessions WHERE token_hash = ?", hash);
  }

  async touch(tx: Tx, hash: Buffer, at: string): Promise<void> {
    const db = connectionOf(tx);
    await db.run("UPDATE ui_sessions SET last_used_at = ? WHERE token_hash = ?", at, hash);
  }

  async delete(tx: Tx, hash: Buffer): Promise<number> {
    const db = connectionOf(tx);
    return (await db.run("DELETE FROM ui_sessions WHERE token_hash = ?", hash)).changes;
  }

  async deleteIdle(tx: Tx, usedBefore: string): Promise<number> {
    const db = connectionOf(tx);
    return (await db.run("DELETE FROM ui_sessions WHERE last_used_at < ?", usedBefore)).changes;
  }

  async insertLoginLink(tx: Tx, hash: Buffer, createdAt: string, expiresAt: string): Promise<void> {
    const db = connectionOf(tx);
    await db.run("INSERT INTO ui_login_links (token_hash, created_at, expires_at) VALUES (?, ?, ?)", hash, createdAt, expiresAt);
  }

  // Two servers taking one link: the second's delete waits for the first's, then finds no row.
  async takeLoginLink(tx: Tx, hash: Buffer, at: string): Promise<boolean> {
    const db = connectionOf(tx);
    return (await db.run("DELETE FROM ui_login_links WHERE token_hash = ? AND expires_at > ?", hash, at)).changes === 1;
  }

  async loginLinkIsLive(r: Reader, hash: Buffer, at: string): Promise<boolean> {
    const db = connectionOf(r);
    return (await db.get<{ live: number }>("SELECT 1 AS live FROM ui_login_links WHERE token_hash = ? AND expires_at > ?", hash, at)) !== undefined;
  }

  async deleteExpiredLoginLinks(tx: Tx, at: string): Promise<number> {
    const db = connectionOf(tx);
    return (await db.run("DELETE FROM ui_login_links WHERE expires_at <= ?", at)).changes;
  }
}
