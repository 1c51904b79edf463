-- The outbound feeds and the merkle summary (CONTRACT §15).
--
-- `origin`: the instance an entry was written on, NULL for this one. Nothing sets it yet; copies
-- replicated from a peer will carry the peer's instance id (§16).
--
-- `merkle_leaf` = sha256 of `id|origin|version|deleted|content_key|project` (docs/feeds.md says
-- how each part is written) and `merkle_bucket` = the first two hex digits of sha256(id), both set
-- by the transaction of every change of the entry, together with its `change_seq`, so a summary
-- reads an index instead of hashing entries. Entries already here are stamped at the next start
-- (MerkleSummaries.stampUnstamped): the leaf names this instance's id, which only the server knows.
ALTER TABLE memory ADD COLUMN origin TEXT;
ALTER TABLE memory ADD COLUMN merkle_leaf TEXT;
ALTER TABLE memory ADD COLUMN merkle_bucket TEXT;

-- The replicable selection (§16: shared memory, doc and skill entries, tombstones included), by
-- project and bucket: a project's or a bucket's leaves are read from this index alone (`scope` and
-- `type` are in it only so that SQLite reads nothing else).
CREATE INDEX memory_merkle ON memory (project, merkle_bucket, id, merkle_leaf, scope, type)
  WHERE scope = 'project' AND type IN ('memory', 'doc', 'skill');
-- Empty but for the start after an upgrade.
CREATE INDEX memory_merkle_unstamped ON memory (pk) WHERE merkle_leaf IS NULL;
