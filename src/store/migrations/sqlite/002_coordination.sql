-- Coordination: tasks with dependencies and a comment log, messages with per-recipient read
-- state, session handoffs, and event audiences (events only some agents may see).

-- Where each agent's last session stopped reading memory (the handoff delta starts after it).
ALTER TABLE agents ADD COLUMN memory_seen_at TEXT;

CREATE TABLE tasks (
  pk               INTEGER PRIMARY KEY,
  id               TEXT NOT NULL UNIQUE,
  title            TEXT NOT NULL,
  description      TEXT NOT NULL DEFAULT '',
  status           TEXT NOT NULL CHECK (status IN ('open', 'claimed', 'completed', 'failed')),
  created_by       TEXT NOT NULL,
  assigned_to      TEXT,
  -- 1 when assigned_to was set by the creator (a reservation), so releasing a claim keeps it.
  reserved         INTEGER NOT NULL DEFAULT 0 CHECK (reserved IN (0, 1)),
  project          TEXT,
  priority         TEXT NOT NULL CHECK (priority IN ('low', 'normal', 'high')),
  tags             TEXT NOT NULL DEFAULT '[]',
  due_at           TEXT,
  expected_outcome TEXT,
  result           TEXT,
  created_at       TEXT NOT NULL,
  updated_at       TEXT NOT NULL,
  claimed_at       TEXT,
  completed_at     TEXT,
  lease_expires_at TEXT
) STRICT;
CREATE INDEX tasks_created ON tasks (created_at, pk);
CREATE INDEX tasks_status ON tasks (status, project);
CREATE INDEX tasks_assigned ON tasks (assigned_to, status);
CREATE INDEX tasks_creator ON tasks (created_by);
CREATE INDEX tasks_lease ON tasks (lease_expires_at) WHERE status = 'claimed' AND lease_expires_at IS NOT NULL;

CREATE TABLE task_tags (
  tag     TEXT NOT NULL,
  task_pk INTEGER NOT NULL REFERENCES tasks (pk) ON DELETE CASCADE,
  PRIMARY KEY (tag, task_pk)
) STRICT, WITHOUT ROWID;
CREATE INDEX task_tags_task ON task_tags (task_pk);

CREATE TABLE task_dependencies (
  task_pk       INTEGER NOT NULL REFERENCES tasks (pk) ON DELETE CASCADE,
  depends_on_pk INTEGER NOT NULL REFERENCES tasks (pk) ON DELETE CASCADE,
  PRIMARY KEY (task_pk, depends_on_pk)
) STRICT, WITHOUT ROWID;
CREATE INDEX task_dependencies_reverse ON task_dependencies (depends_on_pk);

CREATE TABLE task_comments (
  pk         INTEGER PRIMARY KEY,
  id         TEXT NOT NULL UNIQUE,
  task_pk    INTEGER NOT NULL REFERENCES tasks (pk) ON DELETE CASCADE,
  agent_id   TEXT NOT NULL,
  kind       TEXT NOT NULL CHECK (kind IN ('claim', 'unclaim', 'complete', 'fail', 'reopen', 'comment')),
  comment    TEXT NOT NULL,
  created_at TEXT NOT NULL
) STRICT;
CREATE INDEX task_comments_task ON task_comments (task_pk, pk);

-- One row per completed or failed claim, kept when the task is reopened: the record that
-- recommendations (tag affinity) and /agents/performance are computed from.
CREATE TABLE task_outcomes (
  pk          INTEGER PRIMARY KEY,
  task_pk     INTEGER NOT NULL REFERENCES tasks (pk) ON DELETE CASCADE,
  agent_id    TEXT NOT NULL,
  outcome     TEXT NOT NULL CHECK (outcome IN ('completed', 'failed')),
  tags        TEXT NOT NULL DEFAULT '[]',
  claimed_at  TEXT NOT NULL,
  finished_at TEXT NOT NULL
) STRICT;
CREATE INDEX task_outcomes_agent ON task_outcomes (agent_id);

CREATE TABLE messages (
  pk         INTEGER PRIMARY KEY,
  id         TEXT NOT NULL UNIQUE,
  sender     TEXT NOT NULL,
  -- The address as sent: an agent id, 'broadcast', or 'project:<id>'.
  recipient  TEXT NOT NULL,
  project    TEXT,
  subject    TEXT NOT NULL DEFAULT '',
  body       TEXT NOT NULL,
  reply_to   TEXT,
  created_at TEXT NOT NULL
) STRICT;
CREATE INDEX messages_sender ON messages (sender, pk);
CREATE INDEX messages_project ON messages (project) WHERE project IS NOT NULL;

-- Who received a message, each with their own read state.
CREATE TABLE message_recipients (
  message_pk INTEGER NOT NULL REFERENCES messages (pk) ON DELETE CASCADE,
  agent_id   TEXT NOT NULL,
  read_at    TEXT,
  PRIMARY KEY (message_pk, agent_id)
) STRICT, WITHOUT ROWID;
CREATE INDEX message_recipients_inbox ON message_recipients (agent_id, read_at, message_pk);

CREATE TABLE handoffs (
  pk          INTEGER PRIMARY KEY,
  id          TEXT NOT NULL UNIQUE,
  agent_id    TEXT NOT NULL,
  host        TEXT,
  summary     TEXT NOT NULL,
  in_progress TEXT NOT NULL DEFAULT '[]',
  next_steps  TEXT NOT NULL DEFAULT '[]',
  memory_refs TEXT NOT NULL DEFAULT '[]',
  created_at  TEXT NOT NULL
) STRICT;
CREATE INDEX handoffs_agent ON handoffs (agent_id, pk);

-- Events only some agents may see (messages: sender and recipients). An event with rows here
-- is visible to exactly those agents; one without is governed by its project and private_to.
CREATE TABLE event_audience (
  event_seq INTEGER NOT NULL REFERENCES events (seq) ON DELETE CASCADE,
  agent_id  TEXT NOT NULL,
  PRIMARY KEY (event_seq, agent_id)
) STRICT, WITHOUT ROWID;
CREATE INDEX event_audience_agent ON event_audience (agent_id, event_seq);
ALTER TABLE events ADD COLUMN restricted INTEGER NOT NULL DEFAULT 0;
