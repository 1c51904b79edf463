-- Provenance (CONTRACT §11): where an entry came from when no agent wrote it by hand. `source` is
-- the JSON object the API returns ({kind:"capture", capture_id}, …); `source_kind` repeats its kind
-- for filtering. Both stay null for entries agents write themselves.
ALTER TABLE memory ADD COLUMN source TEXT;
ALTER TABLE memory ADD COLUMN source_kind TEXT;
CREATE INDEX memory_source_kind ON memory (source_kind, updated_at) WHERE source_kind IS NOT NULL;

-- Two more edge kinds (§14): `grounds` (a compiled entry grounds an entry about that code) and
-- `depends_on` (between compiled entries). SQLite cannot change a CHECK, so the table is rebuilt;
-- nothing references it.
CREATE TABLE graph_edges_next (
  pk         INTEGER PRIMARY KEY,
  id         TEXT NOT NULL UNIQUE,
  src_pk     INTEGER NOT NULL REFERENCES memory (pk) ON DELETE CASCADE,
  dst_pk     INTEGER NOT NULL REFERENCES memory (pk) ON DELETE CASCADE,
  rel        TEXT NOT NULL CHECK (rel IN ('relates_to', 'supports', 'contradicts', 'supersedes', 'derived_from', 'grounds', 'depends_on')),
  note       TEXT,
  project    TEXT,
  agent_id   TEXT NOT NULL,
  created_at TEXT NOT NULL,
  updated_at TEXT NOT NULL,
  UNIQUE (src_pk, dst_pk, rel)
) STRICT;
INSERT INTO graph_edges_next SELECT pk, id, src_pk, dst_pk, rel, note, project, agent_id, created_at, updated_at FROM graph_edges;
DROP TABLE graph_edges;
ALTER TABLE graph_edges_next RENAME TO graph_edges;
CREATE INDEX graph_edges_dst ON graph_edges (dst_pk);
CREATE INDEX graph_edges_project ON graph_edges (project, pk);

-- When compile (§20) found the code an entry is about changed; pulse counts them.
ALTER TABLE memory ADD COLUMN stale_since TEXT;

-- For the knowledge graph (§14): merge parents are edges, found from either end among the few
-- entries that have parents; the central cache is stamped with the latest change of its projects.
CREATE INDEX memory_with_parents ON memory (pk) WHERE parents <> '[]';
CREATE INDEX events_graph_changes ON events (project, seq) WHERE type IN ('memory.written', 'memory.updated', 'memory.deleted', 'graph.linked');
CREATE INDEX events_graph_seq ON events (seq) WHERE type IN ('memory.written', 'memory.updated', 'memory.deleted', 'graph.linked');
