-- Background jobs claim each run here, so a job runs once per interval however many server
-- processes share the database (one, with SQLite; the same code serves PostgreSQL's several).
CREATE TABLE jobs (
  name        TEXT PRIMARY KEY,
  next_run_at TEXT NOT NULL
) STRICT, WITHOUT ROWID;
