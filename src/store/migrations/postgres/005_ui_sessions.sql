-- Web UI sessions from POST /ui/login. Only hashes of the session tokens are stored; a session
-- ends after 24 hours without use, or at POST /ui/logout. As SQLite's 005.
CREATE TABLE ui_sessions (
  token_hash   BYTEA PRIMARY KEY,
  agent_id     TEXT COLLATE "C" NOT NULL,
  created_at   TEXT COLLATE "C" NOT NULL,
  last_used_at TEXT COLLATE "C" NOT NULL
);
CREATE INDEX ui_sessions_last_used ON ui_sessions (last_used_at);
