-- The OAuth 2.1 authorization-code flow (CONTRACT §19): registered clients, the grants a human
-- consented to, their one-use codes and their refresh tokens. Only SHA-256 hashes of secrets are
-- stored (client secrets, codes, access and refresh tokens); no column holds one in the clear, nor
-- a PKCE verifier (a code keeps the S256 challenge, which is public).

-- Clients registered with POST /oauth/register (RFC 7591). A client metadata document's client
-- (CIMD, whose id is an https URL) is not stored: its document is fetched and cached in memory.
-- `last_used_at`: its last authorization or token request; unused clients expire.
CREATE TABLE oauth_clients (
  client_id     TEXT PRIMARY KEY,
  secret_hash   BLOB,
  auth_method   TEXT NOT NULL,
  client_name   TEXT NOT NULL,
  redirect_uris TEXT NOT NULL,
  metadata      TEXT NOT NULL DEFAULT '{}',
  created_at    TEXT NOT NULL,
  last_used_at  TEXT
) STRICT, WITHOUT ROWID;
CREATE INDEX oauth_clients_created ON oauth_clients (created_at);

-- What a human allowed on the consent page: this client acts as this agent with these scopes on
-- this resource. One grant per consent; its code, refresh tokens and access tokens go with it.
-- `agent_role` is the agent's role at consent: a token of a grant whose agent has another role
-- now is refused.
CREATE TABLE oauth_grants (
  id           TEXT PRIMARY KEY,
  client_id    TEXT NOT NULL,
  client_name  TEXT NOT NULL,
  client_host  TEXT NOT NULL,
  agent_id     TEXT NOT NULL,
  agent_role   TEXT NOT NULL,
  scope        TEXT NOT NULL,
  resource     TEXT NOT NULL,
  created_by   TEXT NOT NULL,
  created_at   TEXT NOT NULL,
  last_used_at TEXT
) STRICT, WITHOUT ROWID;
CREATE INDEX oauth_grants_created ON oauth_grants (created_at, id);
CREATE INDEX oauth_grants_client ON oauth_grants (client_id, agent_id);
CREATE INDEX oauth_grants_agent ON oauth_grants (agent_id);

-- A grant's authorization code: 60 s, redeemed once (`used_at` is set by a conditional update).
-- `redirect_explicit`: the authorization request named the redirect URI, so the token request must.
CREATE TABLE oauth_codes (
  code_hash         BLOB PRIMARY KEY,
  grant_id          TEXT NOT NULL REFERENCES oauth_grants (id) ON DELETE CASCADE,
  client_id         TEXT NOT NULL,
  redirect_uri      TEXT NOT NULL,
  redirect_explicit INTEGER NOT NULL,
  code_challenge    TEXT NOT NULL,
  created_at        TEXT NOT NULL,
  expires_at        TEXT NOT NULL,
  used_at           TEXT
) STRICT, WITHOUT ROWID;
CREATE INDEX oauth_codes_grant ON oauth_codes (grant_id);
CREATE INDEX oauth_codes_expiry ON oauth_codes (expires_at);

-- A grant's refresh tokens: each is used once (rotation); the used ones are kept a while, so that
-- presenting one again is recognised as reuse and revokes the grant.
CREATE TABLE oauth_refresh_tokens (
  token_hash BLOB PRIMARY KEY,
  grant_id   TEXT NOT NULL REFERENCES oauth_grants (id) ON DELETE CASCADE,
  scope      TEXT NOT NULL,
  created_at TEXT NOT NULL,
  expires_at TEXT NOT NULL,
  used_at    TEXT
) STRICT, WITHOUT ROWID;
CREATE INDEX oauth_refresh_tokens_grant ON oauth_refresh_tokens (grant_id, created_at);
CREATE INDEX oauth_refresh_tokens_expiry ON oauth_refresh_tokens (expires_at);

-- Access tokens now come from a grant too (`grant_id`, no key) or from client credentials (`key_hash`,
-- no grant), each with its scope and the resource it was issued for. SQLite cannot drop a NOT NULL,
-- so the table is made again and the live tokens copied over.
CREATE TABLE oauth_tokens_021 (
  token_hash BLOB PRIMARY KEY,
  agent_id   TEXT NOT NULL,
  key_hash   BLOB,
  grant_id   TEXT REFERENCES oauth_grants (id) ON DELETE CASCADE,
  scope      TEXT NOT NULL DEFAULT 'cairn:read cairn:write',
  resource   TEXT,
  created_at TEXT NOT NULL,
  expires_at TEXT NOT NULL
) STRICT, WITHOUT ROWID;
INSERT INTO oauth_tokens_021 (token_hash, agent_id, key_hash, created_at, expires_at)
  SELECT token_hash, agent_id, key_hash, created_at, expires_at FROM oauth_tokens;
DROP TABLE oauth_tokens;
ALTER TABLE oauth_tokens_021 RENAME TO oauth_tokens;
CREATE INDEX oauth_tokens_agent ON oauth_tokens (agent_id);
CREATE INDEX oauth_tokens_expiry ON oauth_tokens (expires_at);
CREATE INDEX oauth_tokens_grant ON oauth_tokens (grant_id) WHERE grant_id IS NOT NULL;
