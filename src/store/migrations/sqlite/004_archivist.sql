-- The archivist's server-side state: its singleton lease (with a fencing token), its key-value
-- store, typed edges between memory entries, and the log it writes its passes to.

-- At most one row (id = 1). `token` grows by one every time the holder changes, never on renewal.
CREATE TABLE archivist_lease (
  id          INTEGER PRIMARY KEY CHECK (id = 1),
  holder      TEXT,
  token       INTEGER NOT NULL,
  acquired_at TEXT,
  expires_at  TEXT
) STRICT;

CREATE TABLE archivist_state (
  key        TEXT PRIMARY KEY,
  value      TEXT NOT NULL,          -- JSON
  updated_at TEXT NOT NULL
) STRICT, WITHOUT ROWID;

-- Edges point at memory rows by key. Soft-deleted ends keep their rows, so their edges stay in the
-- table; reads hide every edge whose ends the caller cannot see.
CREATE TABLE graph_edges (
  pk         INTEGER PRIMARY KEY,
  id         TEXT NOT NULL UNIQUE,
  src_pk     INTEGER NOT NULL REFERENCES memory (pk) ON DELETE CASCADE,
  dst_pk     INTEGER NOT NULL REFERENCES memory (pk) ON DELETE CASCADE,
  rel        TEXT NOT NULL CHECK (rel IN ('relates_to', 'supports', 'contradicts', 'supersedes', 'derived_from')),
  note       TEXT,
  project    TEXT,                   -- the ends' project (null when both are global)
  agent_id   TEXT NOT NULL,          -- who recorded it
  created_at TEXT NOT NULL,
  updated_at TEXT NOT NULL,
  UNIQUE (src_pk, dst_pk, rel)
) STRICT;
CREATE INDEX graph_edges_dst ON graph_edges (dst_pk);
CREATE INDEX graph_edges_project ON graph_edges (project, pk);

CREATE TABLE logs (
  pk         INTEGER PRIMARY KEY,
  id         TEXT NOT NULL UNIQUE,
  level      TEXT NOT NULL CHECK (level IN ('debug', 'info', 'warn', 'error')),
  source     TEXT NOT NULL,
  action     TEXT NOT NULL,
  message    TEXT NOT NULL,
  details    TEXT NOT NULL DEFAULT '{}',
  agent_id   TEXT NOT NULL,
  created_at TEXT NOT NULL
) STRICT;
CREATE INDEX logs_created ON logs (created_at);
