-- The mesh (CONTRACT §16): tokens this instance grants to peers, links it holds to peers, peers it
-- has heard of, and foreign entries an owner suppressed here.
--
-- A token is kept only as the SHA-256 of its secret (`token_hash`, hex) with a short `prefix` to
-- tell tokens apart; a link's token, which this server must send, only sealed under
-- DATA_DIR/secret.key (`token_sealed`). No column holds a token in the clear.
CREATE TABLE mesh_tokens (
  pk             INTEGER PRIMARY KEY,
  id             TEXT NOT NULL UNIQUE,
  label          TEXT NOT NULL,
  token_hash     TEXT NOT NULL UNIQUE,
  prefix         TEXT NOT NULL,
  projects       TEXT NOT NULL DEFAULT '[]',
  include_global INTEGER NOT NULL DEFAULT 0,
  capabilities   TEXT NOT NULL DEFAULT '["pull"]',
  expires_at     TEXT,
  revoked_at     TEXT,
  -- The link this token was minted for (a `both` link mints one back); revoked when it is unlinked.
  link_id        TEXT,
  created_by     TEXT NOT NULL,
  created_at     TEXT NOT NULL,
  updated_at     TEXT NOT NULL,
  last_used_at   TEXT
) STRICT;
CREATE INDEX mesh_tokens_link ON mesh_tokens (link_id) WHERE link_id IS NOT NULL;

-- A link pulls one peer's feed. `cursor` is the peer's change_seq applied up to; the schedule and
-- the claim (`next_sync_at`, `lease_until`, `lease_holder`) live here so any number of server
-- processes sync each link once at a time. `anti_entropy_at`: when the next merkle comparison is due.
CREATE TABLE mesh_links (
  pk               INTEGER PRIMARY KEY,
  id               TEXT NOT NULL UNIQUE,
  peer_instance_id TEXT NOT NULL UNIQUE,
  peer_name        TEXT NOT NULL,
  url              TEXT NOT NULL,
  label            TEXT,
  projects         TEXT NOT NULL DEFAULT '[]',
  direction        TEXT NOT NULL,
  interval_seconds INTEGER NOT NULL,
  max_confidence   REAL NOT NULL,
  paused           INTEGER NOT NULL DEFAULT 0,
  status           TEXT NOT NULL DEFAULT 'active',
  failures         INTEGER NOT NULL DEFAULT 0,
  last_sync_at     TEXT,
  last_success_at  TEXT,
  last_error       TEXT,
  cursor           INTEGER NOT NULL DEFAULT 0,
  token_sealed     TEXT NOT NULL,
  token_hint       TEXT NOT NULL,
  minted_token_id  TEXT,
  applied_total    INTEGER NOT NULL DEFAULT 0,
  rejected_total   INTEGER NOT NULL DEFAULT 0,
  dropped_total    INTEGER NOT NULL DEFAULT 0,
  next_sync_at     TEXT NOT NULL,
  anti_entropy_at  TEXT NOT NULL,
  lease_until      TEXT,
  lease_holder     TEXT,
  created_by       TEXT NOT NULL,
  created_at       TEXT NOT NULL,
  updated_at       TEXT NOT NULL
) STRICT;
CREATE INDEX mesh_links_due ON mesh_links (next_sync_at) WHERE paused = 0;

-- Peers heard of by mDNS or gossip: suggestions only, nothing links itself.
CREATE TABLE mesh_discovered (
  instance_id  TEXT PRIMARY KEY,
  name         TEXT NOT NULL,
  url          TEXT NOT NULL,
  via          TEXT NOT NULL,
  last_seen_at TEXT NOT NULL
) STRICT, WITHOUT ROWID;
CREATE INDEX mesh_discovered_seen ON mesh_discovered (last_seen_at);

-- Foreign entries an owner hid here: not re-imported at `version` or lower, not re-exported.
CREATE TABLE mesh_suppressions (
  memory_id     TEXT PRIMARY KEY,
  origin        TEXT NOT NULL,
  version       INTEGER NOT NULL,
  suppressed_by TEXT NOT NULL,
  suppressed_at TEXT NOT NULL
) STRICT, WITHOUT ROWID;

-- A tombstone's merkle leaf no longer names its content key (a peer's feed does not carry the
-- content of a deleted entry, so its copy could never agree): leaves of deleted entries are
-- stamped again at the next start.
UPDATE memory SET merkle_leaf = NULL WHERE deleted_at IS NOT NULL;
