import type { OAuthStore, TokenRow } from "../oauth.js";
import type { Reader, Tx } from "../store.js";
import { connectionOf } from "./transactions.js";

export class PgOAuth implements OAuthStore {
  async insert(tx: Tx, row: TokenRow): Promise<void> {
    const db = connectionOf(tx);
    await db.run(
      "INSERT INTO oauth_tokens (token_hash, agent_id, key_hash, created_at, expires_at) VALUES (?, ?, ?, ?, ?)",
      row.token_hash,
      row.agent_id,
      row.key_hash,
      row.created_at,
      row.expires_at,
    );
  }

  async byHash(r: Reader, hash: Buffer): Promise<TokenRow | undefined> {
    const db = connectionOf(r);
    return db.get<TokenRow>("SELECT * FROM oauth_tokens WHERE token_hash = ?", hash);
  }

  async deleteExpired(tx: Tx, nowIso: string): Promise<number> {
    const db = connectionOf(tx);
    return (await db.run("DELETE FROM oauth_tokens WHERE expires_at <= ?", nowIso)).changes;
  }

  async deleteForAgent(tx: Tx, agentId: string): Promise<number> {
    const db = connectionOf(tx);
    return (await db.run("DELETE FROM oauth_tokens WHERE agent_id = ?", agentId)).changes;
  }
}
