-- One-time web UI login links: the one `cairn serve` prints at start and those `cairn ui-link`
-- prints later. Only hashes are stored; a link works once, and for 24 hours.
CREATE TABLE ui_login_links (
  token_hash BLOB PRIMARY KEY,
  created_at TEXT NOT NULL,
  expires_at TEXT NOT NULL
) STRICT, WITHOUT ROWID;
CREATE INDEX ui_login_links_expires ON ui_login_links (expires_at);
