-- Feed subscriptions (CONTRACT §15): RSS, Atom and JSON Feed documents polled on a durable schedule
-- and turned into memory entries. `project_key` is the project or '' for global, so one URL is
-- subscribed once per project (a NULL would never collide). A poll is claimed by setting
-- `lease_until` (and `lease_holder`), so any number of server processes poll a feed once per
-- interval; a lease left by a dead process lapses.
CREATE TABLE feeds (
  pk                 INTEGER PRIMARY KEY,
  id                 TEXT NOT NULL UNIQUE,
  project            TEXT,
  project_key        TEXT NOT NULL,
  agent_id           TEXT NOT NULL,
  url                TEXT NOT NULL,
  url_key            TEXT NOT NULL,
  name               TEXT NOT NULL,
  tags               TEXT NOT NULL DEFAULT '[]',
  interval_minutes   INTEGER NOT NULL,
  max_items_per_poll INTEGER NOT NULL,
  confidence         REAL NOT NULL,
  paused             INTEGER NOT NULL DEFAULT 0,
  failing            INTEGER NOT NULL DEFAULT 0,
  failures           INTEGER NOT NULL DEFAULT 0,
  last_polled_at     TEXT,
  last_success_at    TEXT,
  last_error         TEXT,
  next_poll_at       TEXT NOT NULL,
  etag               TEXT,
  last_modified      TEXT,
  items_ingested     INTEGER NOT NULL DEFAULT 0,
  primed             INTEGER NOT NULL DEFAULT 0,
  lease_until        TEXT,
  lease_holder       TEXT,
  created_at         TEXT NOT NULL,
  updated_at         TEXT NOT NULL,
  UNIQUE (project_key, url_key)
) STRICT;
CREATE INDEX feeds_due ON feeds (next_poll_at) WHERE paused = 0;
CREATE INDEX feeds_creator ON feeds (agent_id);

-- The items a feed has seen, by key (guid, else link, else a hash of title and date), so an item
-- becomes an entry once. `last_seen_at` moves while the item is still in the document; keys
-- absent for long are forgotten, which bounds the table.
CREATE TABLE feed_items (
  feed_pk      INTEGER NOT NULL REFERENCES feeds (pk) ON DELETE CASCADE,
  item_key     TEXT NOT NULL,
  memory_id    TEXT,
  first_seen_at TEXT NOT NULL,
  last_seen_at TEXT NOT NULL,
  PRIMARY KEY (feed_pk, item_key)
) STRICT, WITHOUT ROWID;
CREATE INDEX feed_items_age ON feed_items (last_seen_at);
