-- The OAuth 2.1 authorization-code flow (CONTRACT §19), as SQLite's 021: registered clients, the
-- grants a human consented to, their one-use codes and their refresh tokens. Only SHA-256 hashes of
-- secrets are stored; no column holds one in the clear, nor a PKCE verifier.
CREATE TABLE oauth_clients (
  client_id     TEXT COLLATE "C" PRIMARY KEY,
  secret_hash   BYTEA,
  auth_method   TEXT COLLATE "C" NOT NULL,
  client_name   TEXT NOT NULL,
  redirect_uris TEXT COLLATE "C" NOT NULL,
  metadata      TEXT NOT NULL DEFAULT '{}',
  created_at    TEXT COLLATE "C" NOT NULL,
  last_used_at  TEXT COLLATE "C"
);
CREATE INDEX oauth_clients_created ON oauth_clients (created_at);

CREATE TABLE oauth_grants (
  id           TEXT COLLATE "C" PRIMARY KEY,
  client_id    TEXT COLLATE "C" NOT NULL,
  client_name  TEXT NOT NULL,
  client_host  TEXT COLLATE "C" NOT NULL,
  agent_id     TEXT COLLATE "C" NOT NULL,
  agent_role   TEXT COLLATE "C" NOT NULL,
  scope        TEXT COLLATE "C" NOT NULL,
  resource     TEXT COLLATE "C" NOT NULL,
  created_by   TEXT COLLATE "C" NOT NULL,
  created_at   TEXT COLLATE "C" NOT NULL,
  last_used_at TEXT COLLATE "C"
);
CREATE INDEX oauth_grants_created ON oauth_grants (created_at, id);
CREATE INDEX oauth_grants_client ON oauth_grants (client_id, agent_id);
CREATE INDEX oauth_grants_agent ON oauth_grants (agent_id);

CREATE TABLE oauth_codes (
  code_hash         BYTEA PRIMARY KEY,
  grant_id          TEXT COLLATE "C" NOT NULL REFERENCES oauth_grants (id) ON DELETE CASCADE,
  client_id         TEXT COLLATE "C" NOT NULL,
  redirect_uri      TEXT COLLATE "C" NOT NULL,
  redirect_explicit INTEGER NOT NULL,
  code_challenge    TEXT COLLATE "C" NOT NULL,
  created_at        TEXT COLLATE "C" NOT NULL,
  expires_at        TEXT COLLATE "C" NOT NULL,
  used_at           TEXT COLLATE "C"
);
CREATE INDEX oauth_codes_grant ON oauth_codes (grant_id);
CREATE INDEX oauth_codes_expiry ON oauth_codes (expires_at);

CREATE TABLE oauth_refresh_tokens (
  token_hash BYTEA PRIMARY KEY,
  grant_id   TEXT COLLATE "C" NOT NULL REFERENCES oauth_grants (id) ON DELETE CASCADE,
  scope      TEXT COLLATE "C" NOT NULL,
  created_at TEXT COLLATE "C" NOT NULL,
  expires_at TEXT COLLATE "C" NOT NULL,
  used_at    TEXT COLLATE "C"
);
CREATE INDEX oauth_refresh_tokens_grant ON oauth_refresh_tokens (grant_id, created_at);
CREATE INDEX oauth_refresh_tokens_expiry ON oauth_refresh_tokens (expires_at);

-- Access tokens now come from a grant too (`grant_id`, no key) or from client credentials
-- (`key_hash`, no grant), each with its scope and the resource it was issued for.
ALTER TABLE oauth_tokens ALTER COLUMN key_hash DROP NOT NULL;
ALTER TABLE oauth_tokens ADD COLUMN grant_id TEXT COLLATE "C" REFERENCES oauth_grants (id) ON DELETE CASCADE;
ALTER TABLE oauth_tokens ADD COLUMN scope TEXT COLLATE "C" NOT NULL DEFAULT 'cairn:read cairn:write';
ALTER TABLE oauth_tokens ADD COLUMN resource TEXT COLLATE "C";
CREATE INDEX oauth_tokens_grant ON oauth_tokens (grant_id) WHERE grant_id IS NOT NULL;
