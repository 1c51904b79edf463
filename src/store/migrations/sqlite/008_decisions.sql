-- Decisions (CONTRACT §12): append-only records of what was decided and why. Superseding sets
-- `superseded_by` on the older record, the one change a decision ever undergoes. The task, the
-- entries and the superseded decision are held by id, not by key: a decision records its moment,
-- and keeps naming what it named after a project clear removes the task or an entry is deleted.
CREATE TABLE decisions (
  pk            INTEGER PRIMARY KEY,
  id            TEXT NOT NULL UNIQUE,
  project       TEXT,
  agent_id      TEXT NOT NULL,
  task_id       TEXT,
  decision      TEXT NOT NULL,
  rationale     TEXT NOT NULL,
  alternatives  TEXT NOT NULL DEFAULT '[]',
  memory_refs   TEXT NOT NULL DEFAULT '[]',
  tags          TEXT NOT NULL DEFAULT '[]',
  supersedes    TEXT,
  superseded_by TEXT,
  created_at    TEXT NOT NULL
) STRICT;
CREATE INDEX decisions_created ON decisions (created_at, pk);
CREATE INDEX decisions_project ON decisions (project, created_at);
CREATE INDEX decisions_agent ON decisions (agent_id);
CREATE INDEX decisions_task ON decisions (task_id) WHERE task_id IS NOT NULL;
-- A decision is superseded at most once: of two racing supersedes, the key lets one through.
CREATE UNIQUE INDEX decisions_supersedes ON decisions (supersedes) WHERE supersedes IS NOT NULL;

CREATE TABLE decision_tags (
  tag         TEXT NOT NULL,
  decision_pk INTEGER NOT NULL REFERENCES decisions (pk) ON DELETE CASCADE,
  PRIMARY KEY (tag, decision_pk)
) STRICT, WITHOUT ROWID;
CREATE INDEX decision_tags_decision ON decision_tags (decision_pk);

-- Keyword index over the decision and its rationale, kept in step by triggers in the same transaction.
CREATE VIRTUAL TABLE decisions_fts USING fts5 (
  decision, rationale,
  content = 'decisions', content_rowid = 'pk',
  tokenize = 'porter unicode61 remove_diacritics 2'
);
CREATE TRIGGER decisions_fts_after_insert AFTER INSERT ON decisions BEGIN
  INSERT INTO decisions_fts (rowid, decision, rationale) VALUES (new.pk, new.decision, new.rationale);
END;
CREATE TRIGGER decisions_fts_after_delete AFTER DELETE ON decisions BEGIN
  INSERT INTO decisions_fts (decisions_fts, rowid, decision, rationale) VALUES ('delete', old.pk, old.decision, old.rationale);
END;
CREATE TRIGGER decisions_fts_after_update AFTER UPDATE OF decision, rationale ON decisions BEGIN
  INSERT INTO decisions_fts (decisions_fts, rowid, decision, rationale) VALUES ('delete', old.pk, old.decision, old.rationale);
  INSERT INTO decisions_fts (rowid, decision, rationale) VALUES (new.pk, new.decision, new.rationale);
END;
