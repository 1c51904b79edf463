import type { OAuthStore, TokenRow } from "../oauth.js";
import type { Reader, Tx } from "../store.js";
import type { SqlDb } from "./dialect.js";

export class SqlOAuth implements OAuthStore {
  constructor(private readonly db: SqlDb) {}

  async insert(tx: Tx, row: TokenRow): Promise<void> {
    await this.db.run(
      tx,
      "INSERT INTO oauth_tokens (token_hash, agent_id, key_hash, created_at, expires_at) VALUES (?, ?, ?, ?, ?)",
      row.token_hash,
      row.agent_id,
      row.key_hash,
      row.created_at,
      row.expires_at,
    );
  }

  byHash(r: Reader, hash: Buffer): Promise<TokenRow | undefined> {
    return this.db.get<TokenRow>(r, "SELECT * FROM oauth_tokens WHERE token_hash = ?", hash);
  }

  deleteExpired(tx: Tx, nowIso: string): Promise<number> {
    return this.db.run(tx, "DELETE FROM oauth_tokens WHERE expires_at <= ?", nowIso);
  }

  deleteForAgent(tx: Tx, agentId: string): Promise<number> {
    return this.db.run(tx, "DELETE FROM oauth_tokens WHERE agent_id = ?", agentId);
  }
}
