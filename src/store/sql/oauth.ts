import type { ClientRow, CodeRow, GrantRow, OAuthStore, RefreshRow, TokenRow, TokenWithGrant } from "../oauth.js";
import type { Reader, Tx } from "../store.js";
import type { SqlDb } from "./dialect.js";

const GRANT_COLUMNS = "id, client_id, client_name, client_host, agent_id, agent_role, scope, resource, created_by, created_at, last_used_at";

// A refresh token still usable: what keeps a grant, and its client, alive.
const LIVE_REFRESH = "SELECT 1 FROM oauth_refresh_tokens r WHERE r.grant_id = g.id AND r.used_at IS NULL AND r.expires_at > ?";

export class SqlOAuth implements OAuthStore {
  constructor(private readonly db: SqlDb) {}

  async insert(tx: Tx, row: TokenRow): Promise<void> {
    await this.db.run(
      tx,
      "INSERT INTO oauth_tokens (token_hash, agent_id, key_hash, grant_id, scope, resource, created_at, expires_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?)",
      row.token_hash,
      row.agent_id,
      row.key_hash,
      row.grant_id,
      row.scope,
      row.resource,
      row.created_at,
      row.expires_at,
    );
  }

  byHash(r: Reader, hash: Buffer): Promise<TokenWithGrant | undefined> {
    return this.db.get<TokenWithGrant>(
      r,
      `SELECT t.token_hash, t.agent_id, t.key_hash, t.grant_id, t.scope, t.resource, t.created_at, t.expires_at, g.agent_role AS grant_role
       FROM oauth_tokens t LEFT JOIN oauth_grants g ON g.id = t.grant_id WHERE t.token_hash = ?`,
      hash,
    );
  }

  deleteExpired(tx: Tx, nowIso: string): Promise<number> {
    return this.db.run(tx, "DELETE FROM oauth_tokens WHERE expires_at <= ?", nowIso);
  }

  deleteForAgent(tx: Tx, agentId: string): Promise<number> {
    return this.db.run(tx, "DELETE FROM oauth_tokens WHERE agent_id = ? AND grant_id IS NULL", agentId);
  }

  deleteToken(tx: Tx, hash: Buffer): Promise<number> {
    return this.db.run(tx, "DELETE FROM oauth_tokens WHERE token_hash = ?", hash);
  }

  trimGrantTokens(tx: Tx, grantId: string, keep: number): Promise<number> {
    return this.db.run(
      tx,
      `DELETE FROM oauth_tokens WHERE grant_id = ? AND token_hash NOT IN
         (SELECT token_hash FROM oauth_tokens WHERE grant_id = ? ORDER BY created_at DESC, token_hash LIMIT ?)`,
      grantId,
      grantId,
      keep,
    );
  }

  async insertClient(tx: Tx, row: ClientRow): Promise<void> {
    await this.db.run(
      tx,
      "INSERT INTO oauth_clients (client_id, secret_hash, auth_method, client_name, redirect_uris, metadata, created_at, last_used_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?)",
      row.client_id,
      row.secret_hash,
      row.auth_method,
      row.client_name,
      row.redirect_uris,
      row.metadata,
      row.created_at,
      row.last_used_at,
    );
  }

  client(r: Reader, clientId: string): Promise<ClientRow | undefined> {
    return this.db.get<ClientRow>(
      r,
      "SELECT client_id, secret_hash, auth_method, client_name, redirect_uris, metadata, created_at, last_used_at FROM oauth_clients WHERE client_id = ?",
      clientId,
    );
  }

  async countClients(r: Reader): Promise<number> {
    return Number((await this.db.get<{ n: number }>(r, "SELECT count(*) AS n FROM oauth_clients"))?.n ?? 0);
  }

  async touchClient(tx: Tx, clientId: string, at: string, notBefore: string): Promise<void> {
    await this.db.run(tx, "UPDATE oauth_clients SET last_used_at = ? WHERE client_id = ? AND (last_used_at IS NULL OR last_used_at < ?)", at, clientId, notBefore);
  }

  async evictUnusedClient(tx: Tx): Promise<boolean> {
    const oldest = await this.db.get<{ client_id: string }>(
      tx,
      `SELECT c.client_id FROM oauth_clients c
       WHERE NOT EXISTS (SELECT 1 FROM oauth_grants g WHERE g.client_id = c.client_id)
       ORDER BY c.last_used_at IS NOT NULL, coalesce(c.last_used_at, c.created_at), c.client_id LIMIT 1`,
    );
    if (!oldest) return false;
    return (await this.db.run(tx, "DELETE FROM oauth_clients WHERE client_id = ?", oldest.client_id)) > 0;
  }

  async expiredClients(r: Reader, neverUsedBefore: string, unusedBefore: string, nowIso: string, limit: number): Promise<string[]> {
    const rows = await this.db.all<{ client_id: string }>(
      r,
      `SELECT c.client_id FROM oauth_clients c
       WHERE ((c.last_used_at IS NULL AND c.created_at < ?) OR (c.last_used_at IS NOT NULL AND c.last_used_at < ?))
         AND NOT EXISTS (SELECT 1 FROM oauth_grants g WHERE g.client_id = c.client_id AND EXISTS (${LIVE_REFRESH}))
       ORDER BY c.created_at, c.client_id LIMIT ?`,
      neverUsedBefore,
      unusedBefore,
      nowIso,
      limit,
    );
    return rows.map((row) => row.client_id);
  }

  deleteClient(tx: Tx, clientId: string): Promise<number> {
    return this.db.run(tx, "DELETE FROM oauth_clients WHERE client_id = ?", clientId);
  }

  async hasLiveRefresh(r: Reader, clientId: string, nowIso: string): Promise<boolean> {
    return (await this.db.get(r, `SELECT 1 AS live FROM oauth_grants g WHERE g.client_id = ? AND EXISTS (${LIVE_REFRESH})`, clientId, nowIso)) !== undefined;
  }

  async insertGrant(tx: Tx, row: GrantRow): Promise<void> {
    await this.db.run(
      tx,
      `INSERT INTO oauth_grants (${GRANT_COLUMNS}) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
      row.id,
      row.client_id,
      row.client_name,
      row.client_host,
      row.agent_id,
      row.agent_role,
      row.scope,
      row.resource,
      row.created_by,
      row.created_at,
      row.last_used_at,
    );
  }

  grant(r: Reader, id: string): Promise<GrantRow | undefined> {
    return this.db.get<GrantRow>(r, `SELECT ${GRANT_COLUMNS} FROM oauth_grants WHERE id = ?`, id);
  }

  listGrants(r: Reader, after: { at: string; id: string } | null, limit: number): Promise<GrantRow[]> {
    return after === null
      ? this.db.all<GrantRow>(r, `SELECT ${GRANT_COLUMNS} FROM oauth_grants ORDER BY created_at, id LIMIT ?`, limit)
      : this.db.all<GrantRow>(
          r,
          `SELECT ${GRANT_COLUMNS} FROM oauth_grants WHERE created_at > ? OR (created_at = ? AND id > ?) ORDER BY created_at, id LIMIT ?`,
          after.at,
          after.at,
          after.id,
          limit,
        );
  }

  async countGrants(r: Reader): Promise<number> {
    return Number((await this.db.get<{ n: number }>(r, "SELECT count(*) AS n FROM oauth_grants"))?.n ?? 0);
  }

  grantsOf(r: Reader, clientId: string, agentId: string): Promise<GrantRow[]> {
    return this.db.all<GrantRow>(r, `SELECT ${GRANT_COLUMNS} FROM oauth_grants WHERE client_id = ? AND agent_id = ? ORDER BY created_at DESC, id DESC`, clientId, agentId);
  }

  grantsOfClient(r: Reader, clientId: string, limit: number): Promise<GrantRow[]> {
    return this.db.all<GrantRow>(r, `SELECT ${GRANT_COLUMNS} FROM oauth_grants WHERE client_id = ? ORDER BY created_at, id LIMIT ?`, clientId, limit);
  }

  grantsOfAgent(r: Reader, agentId: string): Promise<GrantRow[]> {
    return this.db.all<GrantRow>(r, `SELECT ${GRANT_COLUMNS} FROM oauth_grants WHERE agent_id = ? ORDER BY created_at, id`, agentId);
  }

  async touchGrant(tx: Tx, id: string, at: string): Promise<void> {
    await this.db.run(tx, "UPDATE oauth_grants SET last_used_at = ? WHERE id = ?", at, id);
  }

  async deleteGrant(tx: Tx, id: string): Promise<boolean> {
    // The foreign keys cascade to its code, refresh tokens and access tokens.
    return (await this.db.run(tx, "DELETE FROM oauth_grants WHERE id = ?", id)) > 0;
  }

  deadGrants(r: Reader, nowIso: string, createdBefore: string, limit: number): Promise<GrantRow[]> {
    return this.db.all<GrantRow>(
      r,
      `SELECT ${GRANT_COLUMNS} FROM oauth_grants g
       WHERE g.created_at < ?
         AND NOT EXISTS (${LIVE_REFRESH})
         AND NOT EXISTS (SELECT 1 FROM oauth_codes c WHERE c.grant_id = g.id AND c.used_at IS NULL AND c.expires_at > ?)
       ORDER BY g.created_at, g.id LIMIT ?`,
      createdBefore,
      nowIso,
      nowIso,
      limit,
    );
  }

  async insertCode(tx: Tx, row: CodeRow): Promise<void> {
    await this.db.run(
      tx,
      "INSERT INTO oauth_codes (code_hash, grant_id, client_id, redirect_uri, redirect_explicit, code_challenge, created_at, expires_at, used_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)",
      row.code_hash,
      row.grant_id,
      row.client_id,
      row.redirect_uri,
      row.redirect_explicit,
      row.code_challenge,
      row.created_at,
      row.expires_at,
      row.used_at,
    );
  }

  // One conditional update: of any number of concurrent redemptions (on any server), exactly one
  // sees the row; the others wait for it to commit and then match nothing.
  redeemCode(tx: Tx, hash: Buffer, at: string): Promise<CodeRow | undefined> {
    return this.db.get<CodeRow>(
      tx,
      `UPDATE oauth_codes SET used_at = ? WHERE code_hash = ? AND used_at IS NULL
       RETURNING code_hash, grant_id, client_id, redirect_uri, redirect_explicit, code_challenge, created_at, expires_at, used_at`,
      at,
      hash,
    );
  }

  code(r: Reader, hash: Buffer): Promise<CodeRow | undefined> {
    return this.db.get<CodeRow>(
      r,
      "SELECT code_hash, grant_id, client_id, redirect_uri, redirect_explicit, code_challenge, created_at, expires_at, used_at FROM oauth_codes WHERE code_hash = ?",
      hash,
    );
  }

  deleteExpiredCodes(tx: Tx, nowIso: string): Promise<number> {
    // A used code is kept while its grant lives: presenting it again must revoke the grant.
    return this.db.run(tx, "DELETE FROM oauth_codes WHERE used_at IS NULL AND expires_at <= ?", nowIso);
  }

  async insertRefresh(tx: Tx, row: RefreshRow): Promise<void> {
    await this.db.run(
      tx,
      "INSERT INTO oauth_refresh_tokens (token_hash, grant_id, scope, created_at, expires_at, used_at) VALUES (?, ?, ?, ?, ?, ?)",
      row.token_hash,
      row.grant_id,
      row.scope,
      row.created_at,
      row.expires_at,
      row.used_at,
    );
  }

  rotateRefresh(tx: Tx, hash: Buffer, at: string): Promise<RefreshRow | undefined> {
    return this.db.get<RefreshRow>(
      tx,
      "UPDATE oauth_refresh_tokens SET used_at = ? WHERE token_hash = ? AND used_at IS NULL RETURNING token_hash, grant_id, scope, created_at, expires_at, used_at",
      at,
      hash,
    );
  }

  refresh(r: Reader, hash: Buffer): Promise<RefreshRow | undefined> {
    return this.db.get<RefreshRow>(r, "SELECT token_hash, grant_id, scope, created_at, expires_at, used_at FROM oauth_refresh_tokens WHERE token_hash = ?", hash);
  }

  trimUsedRefresh(tx: Tx, grantId: string, keep: number): Promise<number> {
    return this.db.run(
      tx,
      `DELETE FROM oauth_refresh_tokens WHERE grant_id = ? AND used_at IS NOT NULL AND token_hash NOT IN
         (SELECT token_hash FROM oauth_refresh_tokens WHERE grant_id = ? AND used_at IS NOT NULL ORDER BY created_at DESC, token_hash LIMIT ?)`,
      grantId,
      grantId,
      keep,
    );
  }

  deleteRefresh(tx: Tx, hash: Buffer): Promise<number> {
    return this.db.run(tx, "DELETE FROM oauth_refresh_tokens WHERE token_hash = ?", hash);
  }

  deleteExpiredRefresh(tx: Tx, nowIso: string): Promise<number> {
    return this.db.run(tx, "DELETE FROM oauth_refresh_tokens WHERE expires_at <= ?", nowIso);
  }
}
