-- Bearer tokens from POST /oauth/token (client credentials). Only hashes are stored. A token also
-- records the hash of the key it was issued against, so rotating the key revokes it. As SQLite's 003.
CREATE TABLE oauth_tokens (
  token_hash BYTEA PRIMARY KEY,
  agent_id   TEXT COLLATE "C" NOT NULL,
  key_hash   BYTEA NOT NULL,
  created_at TEXT COLLATE "C" NOT NULL,
  expires_at TEXT COLLATE "C" NOT NULL
);
CREATE INDEX oauth_tokens_agent ON oauth_tokens (agent_id);
CREATE INDEX oauth_tokens_expiry ON oauth_tokens (expires_at);
