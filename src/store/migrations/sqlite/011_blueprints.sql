-- Blueprints (CONTRACT §17): named, versioned plans. A save of a changed document under the same
-- name adds a version; runs keep the version they started with. `project_key` is the project, or
-- '' for a global blueprint, so (project, name, version) is unique in both.
CREATE TABLE blueprints (
  pk          INTEGER PRIMARY KEY,
  id          TEXT NOT NULL UNIQUE,
  project     TEXT,
  project_key TEXT NOT NULL,
  name        TEXT NOT NULL,
  version     INTEGER NOT NULL,
  document    TEXT NOT NULL,          -- JSON, as checked and normalised at save
  doc_hash    TEXT NOT NULL,          -- SHA-256 of the document, to answer an identical save
  node_count  INTEGER NOT NULL,
  created_by  TEXT NOT NULL,
  created_at  TEXT NOT NULL,
  UNIQUE (project_key, name, version)
) STRICT;
