-- A peer's copy that `cairn import` brought in before the import kept its origin was stored with
-- none, as if written here: its origin's newer versions were refused ("another origin") and the
-- merkle summary and feeds named this instance as its origin. It gets the origin its `source`
-- names, and its leaf is stamped again at the next start (MerkleSummaries.stampUnstamped). A copy
-- of an entry written here is this instance's own again.
-- (The CASE keeps the cast to the mesh rows: PostgreSQL may evaluate a WHERE's terms in any order.)
UPDATE memory SET origin = source::jsonb ->> 'origin', merkle_leaf = NULL
 WHERE source_kind = 'mesh' AND origin IS NULL
   AND (CASE WHEN source_kind = 'mesh' THEN source::jsonb ->> 'origin' END) IS DISTINCT FROM (SELECT value FROM meta WHERE key = 'instance_id');

UPDATE memory SET source = NULL, source_kind = NULL
 WHERE source_kind = 'mesh' AND origin IS NULL;
