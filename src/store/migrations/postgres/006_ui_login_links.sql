-- One-time web UI login links: the one `cairn serve` prints at start and those `cairn ui-link`
-- prints later. Only hashes are stored; a link works once, and for 24 hours. As SQLite's 006.
CREATE TABLE ui_login_links (
  token_hash BYTEA PRIMARY KEY,
  created_at TEXT COLLATE "C" NOT NULL,
  expires_at TEXT COLLATE "C" NOT NULL
);
CREATE INDEX ui_login_links_expires ON ui_login_links (expires_at);
