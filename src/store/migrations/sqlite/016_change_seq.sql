-- Every change to an entry takes the seq of the event that announces it (`change_seq`), so the
-- order of changes is the order of commits: a cursor over it (the handoff's "memory changed since
-- you last looked", and later the outbound feed's `since_seq`) never passes a change that commits
-- later with an earlier number, as a cursor over writers' clocks (`updated_at`) could.
-- Entries already here are numbered in the order they last changed; every event drawn from now on
-- has a greater seq than their count.
ALTER TABLE memory ADD COLUMN change_seq INTEGER NOT NULL DEFAULT 0;
UPDATE memory SET change_seq = numbered.n
  FROM (SELECT pk, row_number() OVER (ORDER BY updated_at, pk) AS n FROM memory) AS numbered
 WHERE memory.pk = numbered.pk;
CREATE INDEX memory_change_seq ON memory (change_seq);

ALTER TABLE agents ADD COLUMN memory_seen_seq INTEGER NOT NULL DEFAULT 0;
UPDATE agents SET memory_seen_seq = COALESCE((SELECT max(m.change_seq) FROM memory m WHERE m.updated_at <= agents.memory_seen_at), 0)
 WHERE memory_seen_at IS NOT NULL;
ALTER TABLE agents DROP COLUMN memory_seen_at;
