-- Web UI sessions from POST /ui/login. Only hashes of the session tokens are stored; a session
-- ends after 24 hours without use, or at POST /ui/logout.
CREATE TABLE ui_sessions (
  token_hash   BLOB PRIMARY KEY,
  agent_id     TEXT NOT NULL,
  created_at   TEXT NOT NULL,
  last_used_at TEXT NOT NULL
) STRICT, WITHOUT ROWID;
CREATE INDEX ui_sessions_last_used ON ui_sessions (last_used_at);
