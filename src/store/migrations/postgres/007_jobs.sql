-- Background jobs claim each run here, so a job runs once per interval however many server
-- processes share the database. As SQLite's 007, with the shared rate-limit buckets and failed
-- authentications that only several processes need (one SQLite process counts both in memory).
CREATE TABLE jobs (
  name        TEXT COLLATE "C" PRIMARY KEY,
  next_run_at TEXT COLLATE "C" NOT NULL
);

-- One token bucket per agent: `tokens` as of `refilled_ms` (epoch milliseconds); `granted` says
-- whether the last request taken from it got a token, so one statement both decides and answers.
CREATE TABLE rate_buckets (
  agent_id    TEXT COLLATE "C" PRIMARY KEY,
  tokens      DOUBLE PRECISION NOT NULL,
  refilled_ms BIGINT NOT NULL,
  granted     BOOLEAN NOT NULL
);

-- Failed authentications per (address, identity) key, kept for the throttle's minute: every
-- process counts the same failures, so more servers do not mean more guesses.
CREATE TABLE auth_failures (
  key   TEXT COLLATE "C" NOT NULL,
  at_ms BIGINT NOT NULL
);
CREATE INDEX auth_failures_key ON auth_failures (key, at_ms);
CREATE INDEX auth_failures_at ON auth_failures (at_ms);
