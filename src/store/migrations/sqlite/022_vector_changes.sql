-- Every change to an entry's embedding (`memory_embeddings`) appends its key here in the same
-- transaction, so the HNSW index a server keeps in memory beside the database
-- (src/store/sqlite/ann.ts) catches up with commits made by any process: it remembers the last seq
-- it applied and reads the rows after it. A rolled-back write leaves no row. AUTOINCREMENT: a seq is
-- never drawn twice, even after the rows below it are pruned.
CREATE TABLE vector_changes (
  seq INTEGER PRIMARY KEY AUTOINCREMENT,
  pk  INTEGER NOT NULL
) STRICT;
