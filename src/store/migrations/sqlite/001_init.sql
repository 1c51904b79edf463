-- Core schema: identities, projects (membership drives visibility), memory, events, idempotency.
-- Timestamps are RFC 3339 UTC text with milliseconds, so string order is time order.

CREATE TABLE meta (
  key   TEXT PRIMARY KEY,
  value TEXT NOT NULL
) STRICT;

CREATE TABLE agents (
  agent_id        TEXT PRIMARY KEY,
  display_name    TEXT,
  role            TEXT NOT NULL CHECK (role IN ('owner', 'agent', 'archivist', 'viewer')),
  key_hash        BLOB,            -- sha256 of the API key; NULL = cannot authenticate
  key_source      TEXT NOT NULL CHECK (key_source IN ('generated', 'static', 'bootstrap')),
  created_at      TEXT NOT NULL,
  last_seen_at    TEXT,
  current_project TEXT,
  deleted_at      TEXT             -- deleted agents stay as tombstones so their id is never reissued
) STRICT;

CREATE TABLE projects (
  id          TEXT PRIMARY KEY,
  name        TEXT NOT NULL,
  description TEXT NOT NULL DEFAULT '',
  owner       TEXT NOT NULL,
  created_at  TEXT NOT NULL
) STRICT;

CREATE TABLE project_members (
  project_id TEXT NOT NULL REFERENCES projects (id) ON DELETE CASCADE,
  agent_id   TEXT NOT NULL,
  joined_at  TEXT NOT NULL,
  PRIMARY KEY (project_id, agent_id)
) STRICT, WITHOUT ROWID;
CREATE INDEX project_members_agent ON project_members (agent_id, project_id);

CREATE TABLE memory (
  pk                  INTEGER PRIMARY KEY,
  id                  TEXT NOT NULL UNIQUE,
  type                TEXT NOT NULL CHECK (type IN ('memory', 'doc', 'directive', 'skill', 'compiled')),
  agent_id            TEXT NOT NULL,
  project             TEXT,
  scope               TEXT NOT NULL CHECK (scope IN ('agent', 'project')),
  content             TEXT NOT NULL,
  content_key         TEXT NOT NULL,   -- sha256 of the normalised content, for exact duplicates
  confidence          REAL NOT NULL CHECK (confidence BETWEEN 0 AND 1),
  parents             TEXT NOT NULL DEFAULT '[]',
  tags                TEXT NOT NULL DEFAULT '[]',
  headline            TEXT,
  created_at          TEXT NOT NULL,
  updated_at          TEXT NOT NULL,
  version             INTEGER NOT NULL DEFAULT 1,
  expires_at          TEXT,
  read_count          INTEGER NOT NULL DEFAULT 0,
  distinct_readers    INTEGER NOT NULL DEFAULT 0,
  reinforcement_count INTEGER NOT NULL DEFAULT 0,
  last_reinforced_at  TEXT,
  superseded_by       TEXT,
  embedding_model     TEXT,            -- NULL until embedded; the backfill job picks these up
  deleted_at          TEXT
) STRICT;
CREATE INDEX memory_updated ON memory (updated_at, pk);
CREATE INDEX memory_content_key ON memory (content_key) WHERE deleted_at IS NULL;
CREATE INDEX memory_expiring ON memory (expires_at) WHERE expires_at IS NOT NULL AND deleted_at IS NULL;
CREATE INDEX memory_unembedded ON memory (pk) WHERE embedding_model IS NULL AND deleted_at IS NULL;
CREATE INDEX memory_type_updated ON memory (type, updated_at);

CREATE TABLE memory_tags (
  tag       TEXT NOT NULL,
  memory_pk INTEGER NOT NULL REFERENCES memory (pk) ON DELETE CASCADE,
  PRIMARY KEY (tag, memory_pk)
) STRICT, WITHOUT ROWID;
CREATE INDEX memory_tags_memory ON memory_tags (memory_pk);

CREATE TABLE memory_readers (
  memory_pk     INTEGER NOT NULL REFERENCES memory (pk) ON DELETE CASCADE,
  agent_id      TEXT NOT NULL,
  reads         INTEGER NOT NULL,
  first_read_at TEXT NOT NULL,
  last_read_at  TEXT NOT NULL,
  last_context  TEXT,
  PRIMARY KEY (memory_pk, agent_id)
) STRICT, WITHOUT ROWID;

-- Keyword index over content and tags, kept in step with `memory` by triggers in the same transaction.
CREATE VIRTUAL TABLE memory_fts USING fts5 (
  content, tags,
  content = 'memory', content_rowid = 'pk',
  tokenize = 'porter unicode61 remove_diacritics 2'
);
CREATE TRIGGER memory_fts_after_insert AFTER INSERT ON memory BEGIN
  INSERT INTO memory_fts (rowid, content, tags) VALUES (new.pk, new.content, new.tags);
END;
CREATE TRIGGER memory_fts_after_delete AFTER DELETE ON memory BEGIN
  INSERT INTO memory_fts (memory_fts, rowid, content, tags) VALUES ('delete', old.pk, old.content, old.tags);
END;
CREATE TRIGGER memory_fts_after_update AFTER UPDATE OF content, tags ON memory BEGIN
  INSERT INTO memory_fts (memory_fts, rowid, content, tags) VALUES ('delete', old.pk, old.content, old.tags);
  INSERT INTO memory_fts (rowid, content, tags) VALUES (new.pk, new.content, new.tags);
END;

-- AUTOINCREMENT: a seq is never reused, even after retention prunes the newest rows.
CREATE TABLE events (
  seq        INTEGER PRIMARY KEY AUTOINCREMENT,
  id         TEXT NOT NULL UNIQUE,
  type       TEXT NOT NULL,
  agent_id   TEXT NOT NULL,
  project    TEXT,
  private_to TEXT,                    -- set when only one agent may see the event
  payload    TEXT NOT NULL,
  created_at TEXT NOT NULL
) STRICT;
CREATE INDEX events_created ON events (created_at);

CREATE TABLE idempotency (
  agent_id     TEXT NOT NULL,
  key          TEXT NOT NULL,
  request_hash TEXT NOT NULL,
  status       INTEGER NOT NULL,
  body         TEXT,
  headers      TEXT NOT NULL DEFAULT '{}',
  created_at   TEXT NOT NULL,
  PRIMARY KEY (agent_id, key)
) STRICT, WITHOUT ROWID;
CREATE INDEX idempotency_created ON idempotency (created_at);
