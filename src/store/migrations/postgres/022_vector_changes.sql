-- SQLite's migration 022 adds the change log of its HNSW index (vector_changes); PostgreSQL's
-- pgvector index is kept by PostgreSQL itself. Kept so both backends share the numbering.
SELECT 1;
