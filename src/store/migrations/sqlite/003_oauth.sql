-- Bearer tokens from POST /oauth/token (client credentials). Only hashes are stored. A token also
-- records the hash of the key it was issued against, so rotating the key revokes it.
CREATE TABLE oauth_tokens (
  token_hash BLOB PRIMARY KEY,
  agent_id   TEXT NOT NULL,
  key_hash   BLOB NOT NULL,
  created_at TEXT NOT NULL,
  expires_at TEXT NOT NULL
) STRICT, WITHOUT ROWID;
CREATE INDEX oauth_tokens_agent ON oauth_tokens (agent_id);
CREATE INDEX oauth_tokens_expiry ON oauth_tokens (expires_at);
