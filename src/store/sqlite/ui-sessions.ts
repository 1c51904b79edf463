import type { Db } from "./db.js";

export interface UiSessionRow {
  token_hash: Buffer;
  agent_id: string;
  created_at: string;
  last_used_at: string;
}

export const insertUiSession = (db: Db, row: UiSessionRow): void => {
  db.run("INSERT INTO ui_sessions (token_hash, agent_id, created_at, last_used_at) VALUES (?, ?, ?, ?)", row.token_hash, row.agent_id, row.created_at, row.last_used_at);
};

export const uiSessionByHash = (db: Db, hash: Buffer): UiSessionRow | undefined => db.get<UiSessionRow>("SELECT * FROM ui_sessions WHERE token_hash = ?", hash);

export const touchUiSession = (db: Db, hash: Buffer, at: string): void => {
  db.run("UPDATE ui_sessions SET last_used_at = ? WHERE token_hash = ?", at, hash);
};

export const deleteUiSession = (db: Db, hash: Buffer): number => db.run("DELETE FROM ui_sessions WHERE token_hash = ?", hash).changes;

export const deleteIdleUiSessions = (db: Db, usedBefore: string): number => db.run("DELETE FROM ui_sessions WHERE last_used_at < ?", usedBefore).changes;

export const insertLoginLink = (db: Db, hash: Buffer, createdAt: string, expiresAt: string): void => {
  db.run("INSERT INTO ui_login_links (token_hash, created_at, expires_at) VALUES (?, ?, ?)", hash, createdAt, expiresAt);
};

/** Uses up a live link: true once for each link, however many processes race for it. */
export const takeLoginLink = (db: Db, hash: Buffer, at: string): boolean =>
  db.run("DELETE FROM ui_login_links WHERE token_hash = ? AND expires_at > ?", hash, at).changes === 1;

export const loginLinkIsLive = (db: Db, hash: Buffer, at: string): boolean =>
  db.get<{ live: number }>("SELECT 1 AS live FROM ui_login_links WHERE token_hash = ? AND expires_at > ?", hash, at) !== undefined;

export const deleteExpiredLoginLinks = (db: Db, at: string): number => db.run("DELETE FROM ui_login_links WHERE expires_at <= ?", at).changes;
