-- Provenance (CONTRACT §11): where an entry came from when no agent wrote it by hand. `source` is
-- the JSON object the API returns ({kind:"capture", capture_id}, …); `source_kind` repeats its kind
-- for filtering. Both stay null for entries agents write themselves.
ALTER TABLE memory ADD COLUMN source TEXT;
ALTER TABLE memory ADD COLUMN source_kind TEXT COLLATE "C";
CREATE INDEX memory_source_kind ON memory (source_kind, updated_at) WHERE source_kind IS NOT NULL;

-- Two more edge kinds (§14): `grounds` and `depends_on`.
ALTER TABLE graph_edges DROP CONSTRAINT graph_edges_rel_check;
ALTER TABLE graph_edges ADD CONSTRAINT graph_edges_rel_check
  CHECK (rel IN ('relates_to', 'supports', 'contradicts', 'supersedes', 'derived_from', 'grounds', 'depends_on'));

-- When compile (§20) found the code an entry is about changed; pulse counts them.
ALTER TABLE memory ADD COLUMN stale_since TEXT;

-- For the knowledge graph (§14): merge parents are edges, found from either end among the few
-- entries that have parents; the central cache is stamped with the latest change of its projects.
CREATE INDEX memory_with_parents ON memory (pk) WHERE parents <> '[]';
CREATE INDEX events_graph_changes ON events (project, seq) WHERE type IN ('memory.written', 'memory.updated', 'memory.deleted', 'graph.linked');
CREATE INDEX events_graph_seq ON events (seq) WHERE type IN ('memory.written', 'memory.updated', 'memory.deleted', 'graph.linked');
