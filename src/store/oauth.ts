import { rowColumns } from "./row-columns.js";
import type { Reader, Tx } from "./store.js";

/**
 * An access token: bought with an agent's key (client credentials: `key_hash`, no grant) or issued
 * from a grant (the code flow: `grant_id`, no key). Only its hash is stored.
 */
export interface TokenRow {
  token_hash: Buffer;
  agent_id: string;
  key_hash: Buffer | null;
  grant_id: string | null;
  scope: string;
  /** The resource it was issued for (`<PUBLIC_URL>/mcp`); null for tokens from before it was recorded. */
  resource: string | null;
  created_at: string;
  expires_at: string;
}

export const TOKEN_ROW_COLUMNS = rowColumns<TokenRow>("oauth_tokens", {
  token_hash: true,
  agent_id: true,
  key_hash: true,
  grant_id: true,
  scope: true,
  resource: true,
  created_at: true,
  expires_at: true,
});

/** A token as authentication reads it: with its grant's agent role at consent, when it has a grant. */
export type TokenWithGrant = TokenRow & { grant_role: string | null };

/** A client registered with POST /oauth/register (RFC 7591). */
export interface ClientRow {
  client_id: string;
  /** Confidential clients only: the SHA-256 of the secret shown once. */
  secret_hash: Buffer | null;
  auth_method: string;
  client_name: string;
  /** JSON array of the accepted redirect URIs. */
  redirect_uris: string;
  /** JSON object of the other registered metadata, echoed back as registered. */
  metadata: string;
  created_at: string;
  last_used_at: string | null;
}

export const CLIENT_ROW_COLUMNS = rowColumns<ClientRow>("oauth_clients", {
  client_id: true,
  secret_hash: true,
  auth_method: true,
  client_name: true,
  redirect_uris: true,
  metadata: true,
  created_at: true,
  last_used_at: true,
});

/** What a human allowed: this client acts as this agent with this scope on this resource. */
export interface GrantRow {
  id: string;
  client_id: string;
  client_name: string;
  client_host: string;
  agent_id: string;
  agent_role: string;
  scope: string;
  resource: string;
  created_by: string;
  created_at: string;
  last_used_at: string | null;
}

export const GRANT_ROW_COLUMNS = rowColumns<GrantRow>("oauth_grants", {
  id: true,
  client_id: true,
  client_name: true,
  client_host: true,
  agent_id: true,
  agent_role: true,
  scope: true,
  resource: true,
  created_by: true,
  created_at: true,
  last_used_at: true,
});

export interface CodeRow {
  code_hash: Buffer;
  grant_id: string;
  client_id: string;
  redirect_uri: string;
  /** 1 when the authorization request named the redirect URI (the token request must then name it too). */
  redirect_explicit: number;
  code_challenge: string;
  created_at: string;
  expires_at: string;
  used_at: string | null;
}

export const CODE_ROW_COLUMNS = rowColumns<CodeRow>("oauth_codes", {
  code_hash: true,
  grant_id: true,
  client_id: true,
  redirect_uri: true,
  redirect_explicit: true,
  code_challenge: true,
  created_at: true,
  expires_at: true,
  used_at: true,
});

export interface RefreshRow {
  token_hash: Buffer;
  grant_id: string;
  scope: string;
  created_at: string;
  expires_at: string;
  used_at: string | null;
}

export const REFRESH_ROW_COLUMNS = rowColumns<RefreshRow>("oauth_refresh_tokens", {
  token_hash: true,
  grant_id: true,
  scope: true,
  created_at: true,
  expires_at: true,
  used_at: true,
});

export interface OAuthStore {
  insert(tx: Tx, row: TokenRow): Promise<void>;
  byHash(r: Reader, hash: Buffer): Promise<TokenWithGrant | undefined>;
  /** Access tokens past their time; returns how many went. */
  deleteExpired(tx: Tx, nowIso: string): Promise<number>;
  /** Client-credentials tokens of the agent (bought with its key); a grant's go with the grant. */
  deleteForAgent(tx: Tx, agentId: string): Promise<number>;
  /** Revokes one access token by its hash. */
  deleteToken(tx: Tx, hash: Buffer): Promise<number>;
  /** A grant's access tokens beyond the newest `keep`. */
  trimGrantTokens(tx: Tx, grantId: string, keep: number): Promise<number>;

  insertClient(tx: Tx, row: ClientRow): Promise<void>;
  client(r: Reader, clientId: string): Promise<ClientRow | undefined>;
  countClients(r: Reader): Promise<number>;
  /** Writes the client's last use, at most once per `notBefore` (its previous use is older than that). */
  touchClient(tx: Tx, clientId: string, at: string, notBefore: string): Promise<void>;
  /**
   * Removes the oldest client that holds no grant (a registration that never led anywhere), to make
   * room for a new one; false when every client holds one.
   */
  evictUnusedClient(tx: Tx): Promise<boolean>;
  /**
   * Clients whose last use (or registration) is before `unusedBefore` (never-used ones: before
   * `neverUsedBefore`) and that hold no live refresh token, at most `limit`; returns their ids.
   */
  expiredClients(r: Reader, neverUsedBefore: string, unusedBefore: string, nowIso: string, limit: number): Promise<string[]>;
  deleteClient(tx: Tx, clientId: string): Promise<number>;
  /** Whether one of the client's grants holds a refresh token still usable. */
  hasLiveRefresh(r: Reader, clientId: string, nowIso: string): Promise<boolean>;

  insertGrant(tx: Tx, row: GrantRow): Promise<void>;
  grant(r: Reader, id: string): Promise<GrantRow | undefined>;
  /** Grants oldest first after the keyset `after`. */
  listGrants(r: Reader, after: { at: string; id: string } | null, limit: number): Promise<GrantRow[]>;
  countGrants(r: Reader): Promise<number>;
  /** The client's grants for the agent, newest first. */
  grantsOf(r: Reader, clientId: string, agentId: string): Promise<GrantRow[]>;
  grantsOfClient(r: Reader, clientId: string, limit: number): Promise<GrantRow[]>;
  grantsOfAgent(r: Reader, agentId: string): Promise<GrantRow[]>;
  touchGrant(tx: Tx, id: string, at: string): Promise<void>;
  /** Deletes the grant with its code, refresh tokens and access tokens; false when it was gone already. */
  deleteGrant(tx: Tx, id: string): Promise<boolean>;
  /**
   * Grants that can never be used again: no live refresh token, no code still redeemable, and made
   * before `createdBefore` (at most `limit`).
   */
  deadGrants(r: Reader, nowIso: string, createdBefore: string, limit: number): Promise<GrantRow[]>;

  insertCode(tx: Tx, row: CodeRow): Promise<void>;
  /**
   * Marks the code used, if it is unused: the one redemption that wins. Undefined when it was used
   * already or never existed (`code` tells which).
   */
  redeemCode(tx: Tx, hash: Buffer, at: string): Promise<CodeRow | undefined>;
  code(r: Reader, hash: Buffer): Promise<CodeRow | undefined>;
  deleteExpiredCodes(tx: Tx, nowIso: string): Promise<number>;

  insertRefresh(tx: Tx, row: RefreshRow): Promise<void>;
  /** Marks the refresh token used, if it is unused: the one rotation that wins. */
  rotateRefresh(tx: Tx, hash: Buffer, at: string): Promise<RefreshRow | undefined>;
  refresh(r: Reader, hash: Buffer): Promise<RefreshRow | undefined>;
  /** A grant's used refresh tokens beyond the newest `keep` (kept to recognise reuse). */
  trimUsedRefresh(tx: Tx, grantId: string, keep: number): Promise<number>;
  deleteRefresh(tx: Tx, hash: Buffer): Promise<number>;
  deleteExpiredRefresh(tx: Tx, nowIso: string): Promise<number>;
}
