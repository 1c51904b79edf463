-- Background jobs claim each run here, so a job runs once per interval however many server
-- processes share the database. As SQLite's 007, with the shared rate-limit buckets that only
-- several processes need (one SQLite process counts in memory).
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
