-- Captures (CONTRACT §13): raw session text from host hooks, queued for the archivist to distil
-- into memory. Private to its author and the archivist role; never embedded, indexed or
-- replicated, so there is no keyword table. `content` is stored already redacted; `content_hash`
-- (SHA-256 hex of it) finds the same text sent twice by one agent and session within a day.
CREATE TABLE captures (
  pk           INTEGER PRIMARY KEY,
  id           TEXT NOT NULL UNIQUE,
  agent_id     TEXT NOT NULL,
  project      TEXT,
  session_id   TEXT,
  host         TEXT,
  content      TEXT NOT NULL,
  content_hash TEXT NOT NULL,
  bytes        INTEGER NOT NULL,
  redactions   INTEGER NOT NULL,
  -- pending → digested, or dead once it failed CAPTURE_MAX_ATTEMPTS times.
  status       TEXT NOT NULL DEFAULT 'pending',
  attempts     INTEGER NOT NULL DEFAULT 0,
  last_error   TEXT,
  memory_ids   TEXT NOT NULL DEFAULT '[]',
  created_at   TEXT NOT NULL,
  expires_at   TEXT NOT NULL,
  digested_at  TEXT
) STRICT;
CREATE INDEX captures_queue ON captures (status, created_at, pk);
CREATE INDEX captures_author ON captures (agent_id, created_at, pk);
CREATE INDEX captures_duplicate ON captures (agent_id, content_hash, created_at);
CREATE INDEX captures_expiry ON captures (expires_at);
