-- Blueprint runs (CONTRACT §17): an instantiation of one blueprint version. Its tasks are ordinary
-- tasks that carry `run_id` and `node_key`; `gate` marks the tasks no agent may take.
CREATE TABLE blueprint_runs (
  pk           INTEGER PRIMARY KEY,
  id           TEXT NOT NULL UNIQUE,
  blueprint_pk INTEGER NOT NULL REFERENCES blueprints (pk),
  project      TEXT,
  params       TEXT NOT NULL,                -- JSON, after defaults
  status       TEXT NOT NULL CHECK (status IN ('running', 'completed', 'failed', 'cancelled')),
  created_by   TEXT NOT NULL,
  created_at   TEXT NOT NULL,
  updated_at   TEXT NOT NULL
) STRICT;
CREATE INDEX blueprint_runs_blueprint ON blueprint_runs (blueprint_pk, pk);
CREATE INDEX blueprint_runs_project ON blueprint_runs (project, pk);

-- One row per node key: a node's task, or (with no task) a fan-out waiting for its items
-- ('pending') or one that had none ('skipped'). `anchors` holds, for `anchor_changed` checks, each
-- anchor's sha when the task was created; `gate_task_pk` the task a `task` gate waits on.
CREATE TABLE blueprint_run_nodes (
  pk           INTEGER PRIMARY KEY,
  run_pk       INTEGER NOT NULL REFERENCES blueprint_runs (pk) ON DELETE CASCADE,
  node_id      TEXT NOT NULL,
  key          TEXT NOT NULL,
  task_pk      INTEGER REFERENCES tasks (pk) ON DELETE SET NULL,
  state        TEXT NOT NULL CHECK (state IN ('task', 'pending', 'skipped')),
  item         TEXT,
  item_index   INTEGER,
  attempt      INTEGER NOT NULL DEFAULT 1,
  anchors      TEXT NOT NULL DEFAULT '{}',
  gate_task_pk INTEGER,
  UNIQUE (run_pk, key)
) STRICT;
CREATE INDEX blueprint_run_nodes_task ON blueprint_run_nodes (task_pk);
CREATE INDEX blueprint_run_nodes_gate ON blueprint_run_nodes (gate_task_pk) WHERE gate_task_pk IS NOT NULL;

ALTER TABLE tasks ADD COLUMN run_id TEXT;
ALTER TABLE tasks ADD COLUMN node_key TEXT;
ALTER TABLE tasks ADD COLUMN gate TEXT CHECK (gate IN ('human', 'timer', 'task'));
CREATE INDEX tasks_run ON tasks (run_id, node_key) WHERE run_id IS NOT NULL;
CREATE INDEX tasks_timer_gates ON tasks (due_at) WHERE gate = 'timer' AND status = 'open';
