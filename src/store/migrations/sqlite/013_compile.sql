-- Compile (CONTRACT §18): the server's record of the code a client compiled. One anchor per
-- (project, path, symbol); `project_key` is the project, or '' for global code, so the key is unique
-- in both. Each anchor has one `compiled` entry (`memory_pk`). `previous_sha` is the sha before the
-- last change, shown with the anchor; `git_commit` the commit its current sha was compiled at.
CREATE TABLE compile_anchors (
  pk           INTEGER PRIMARY KEY,
  project      TEXT,
  project_key  TEXT NOT NULL,
  path         TEXT NOT NULL,
  symbol       TEXT NOT NULL,          -- '' for a module or file unit
  kind         TEXT NOT NULL CHECK (kind IN ('module', 'function', 'class', 'interface', 'type', 'method', 'const', 'file')),
  lang         TEXT NOT NULL,
  start_line   INTEGER NOT NULL,
  end_line     INTEGER NOT NULL,
  sha          TEXT NOT NULL,
  previous_sha TEXT,
  signature    TEXT,
  memory_pk    INTEGER NOT NULL REFERENCES memory (pk),
  git_commit   TEXT,
  created_at   TEXT NOT NULL,
  updated_at   TEXT NOT NULL,
  UNIQUE (project_key, path, symbol)
) STRICT;
-- The unique key serves a file's anchors and a path prefix; this one a dependency named by symbol.
CREATE INDEX compile_anchors_symbol ON compile_anchors (project_key, symbol);

-- Why an entry is stale: {path, symbol, old_sha, new_sha} as JSON, beside `stale_since` (010).
ALTER TABLE memory ADD COLUMN stale_reason TEXT;
CREATE INDEX memory_stale ON memory (project, stale_since, pk) WHERE stale_since IS NOT NULL;
