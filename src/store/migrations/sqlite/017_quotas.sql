-- Quotas that protect the team from one agent (issue 25). An agent's allowance of bulk work per
-- hour (compile units, compile bytes) is a token bucket per (agent, quota): `tokens` as of
-- `refilled_ms` (epoch milliseconds), refilled evenly over the hour; `granted` says whether the
-- last charge fitted, so one upsert both decides and answers. A bucket idle for an hour is full,
-- the same as no row, and is pruned.
CREATE TABLE quota_buckets (
  agent_id    TEXT NOT NULL,
  quota       TEXT NOT NULL,
  tokens      REAL NOT NULL,
  refilled_ms INTEGER NOT NULL,
  granted     INTEGER NOT NULL,
  PRIMARY KEY (agent_id, quota)
) STRICT, WITHOUT ROWID;
CREATE INDEX quota_buckets_refilled ON quota_buckets (refilled_ms);

-- What the other quotas count, each in one index: live entries per project (the cap), and an
-- agent's entries still waiting for a vector (its share of the embedding backlog).
CREATE INDEX memory_live_project ON memory (project) WHERE deleted_at IS NULL;
CREATE INDEX memory_unembedded_agent ON memory (agent_id) WHERE embedding_model IS NULL AND deleted_at IS NULL;
