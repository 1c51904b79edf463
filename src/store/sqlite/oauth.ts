import type { Db } from "./db.js";

export interface TokenRow {
  token_hash: Buffer;
  agent_id: string;
  key_hash: Buffer;
  created_at: string;
  expires_at: string;
}

export const insertToken = (db: Db, row: TokenRow): void => {
  db.run(
    "INSERT INTO oauth_tokens (token_hash, agent_id, key_hash, created_at, expires_at) VALUES (?, ?, ?, ?, ?)",
    row.token_hash,
    row.agent_id,
    row.key_hash,
    row.created_at,
    row.expires_at,
  );
};

export const tokenByHash = (db: Db, hash: Buffer): TokenRow | undefined => db.get<TokenRow>("SELECT * FROM oauth_tokens WHERE token_hash = ?", hash);

export const deleteExpiredTokens = (db: Db, nowIso: string): number => db.run("DELETE FROM oauth_tokens WHERE expires_at <= ?", nowIso).changes;

export const deleteAgentTokens = (db: Db, agentId: string): number => db.run("DELETE FROM oauth_tokens WHERE agent_id = ?", agentId).changes;
