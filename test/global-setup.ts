import { mkdirSync, mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { TestProject } from "vitest/node";
import pg from "pg";
import { PgStore } from "../src/store/postgres/store.js";
import { CHROMIUM, HAS_CHROMIUM, INSTALL_CHROMIUM } from "./helpers/browser.js";
import { adminSql, databaseUrl, onPostgres, POSTGRES_URL, templateDatabase } from "./helpers/database.js";
import { CAN_UNSHARE, NAMESPACE_SKIP_REASON } from "./helpers/namespace.js";

/**
 * On PostgreSQL: a migrated template that every test server's database is cloned from (a clone is
 * far quicker than migrating), under a prefix of this run's own; returns what drops them all.
 */
async function preparePostgres(): Promise<() => Promise<void>> {
  await dropAbandoned();
  process.env.CAIRN_TEST_DATABASE_PREFIX = `cairn_test_${process.pid}_`;
  adminSql(`CREATE DATABASE "${templateDatabase()}"`);
  const store = await PgStore.open(databaseUrl(POSTGRES_URL as string, templateDatabase()));
  await store.close();
  process.stderr.write(`\nnote: the suite runs on PostgreSQL (${new URL(POSTGRES_URL as string).host}), a database per test server\n\n`);
  return async () => {
    const admin = new pg.Client({ connectionString: POSTGRES_URL });
    await admin.connect();
    try {
      const started = performance.now();
      const { rows } = await admin.query<{ datname: string }>("SELECT datname FROM pg_database WHERE starts_with(datname, $1)", [process.env.CAIRN_TEST_DATABASE_PREFIX]);
      if (keepDatabases()) {
        process.stderr.write(`\nnote: kept the run's ${databases(rows.length)} (CAIRN_TEST_KEEP_DATABASES); the next run drops them\n`);
        return;
      }
      for (const { datname } of rows) await admin.query(`DROP DATABASE IF EXISTS "${datname}" WITH (FORCE)`);
      // The end of a PostgreSQL run waits for this: said, so a slow end is not taken for a hang.
      process.stderr.write(`\nnote: dropped the run's ${databases(rows.length)} in ${secondsSince(started)} s\n`);
    } finally {
      await admin.end();
    }
  };
}

/**
 * CAIRN_TEST_KEEP_DATABASES=1: leave this run's databases for the next run's `dropAbandoned`, for
 * a server thrown away after the run (CI's), where the drops were two minutes of every run.
 */
const keepDatabases = (): boolean => ["1", "true"].includes(process.env.CAIRN_TEST_KEEP_DATABASES ?? "");

const databases = (count: number): string => `${count} test database${count === 1 ? "" : "s"}`;

/** Seconds since a `performance.now()`, to a tenth. */
const secondsSince = (started: number): string => ((performance.now() - started) / 1000).toFixed(1);

/** Whether a process with this pid runs on this machine. */
function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (error) {
    return (error as NodeJS.ErrnoException).code === "EPERM";
  }
}

/** The databases of earlier runs that were killed before they could drop their own. */
async function dropAbandoned(): Promise<void> {
  const admin = new pg.Client({ connectionString: POSTGRES_URL });
  await admin.connect();
  try {
    const { rows } = await admin.query<{ datname: string }>("SELECT datname FROM pg_database WHERE datname ~ '^cairn_test_[0-9]+_'");
    for (const { datname } of rows) {
      const pid = Number(/^cairn_test_(\d+)_/.exec(datname)?.[1]);
      if (!alive(pid)) await admin.query(`DROP DATABASE IF EXISTS "${datname}" WITH (FORCE)`);
    }
  } finally {
    await admin.end();
  }
}

/**
 * Before anything runs: every temporary file of this run (data directories, homes, the children's
 * files) goes under one directory, removed when the run ends, so a run leaves nothing behind even
 * where a test forgot to clean up. And says once when the browser tests will be skipped, and how
 * to run them. At the end, says again which order the run took (the shuffle's seed), where a
 * failure's reader looks first.
 */
export default async function setup(project: TestProject): Promise<() => Promise<void>> {
  const runDir = mkdtempSync(join(tmpdir(), "cairn-test-run-"));
  process.env.TMPDIR = runDir;
  // A home of the run's own: a child that falls back to ~/.cairn (a bridge starting a server when
  // its test has already stopped one) must never write to, or leave a server on, the real one.
  process.env.HOME = join(runDir, "home");
  mkdirSync(process.env.HOME);
  const dropDatabases = onPostgres ? await preparePostgres() : null;
  if (!HAS_CHROMIUM && !process.env.CI) {
    process.stderr.write(
      `\nnote: the web UI's browser tests (test/ui) are skipped: ${CHROMIUM} was not found.\n` +
        `      They drive Debian's Chromium; install it with \`${INSTALL_CHROMIUM}\` to run them (.ci/run always does).\n\n`,
    );
  }
  if (!CAN_UNSHARE && !process.env.CI) {
    process.stderr.write(`\nnote: ${NAMESPACE_SKIP_REASON}.\n      It makes a network namespace of its own so that multicast never leaves it: run the suite as root to include it.\n\n`);
  }
  const { seed, shuffle } = project.config.sequence;
  return async () => {
    const started = performance.now();
    rmSync(runDir, { recursive: true, force: true });
    process.stderr.write(`\nnote: removed the run's temporary files in ${secondsSince(started)} s\n`);
    await dropDatabases?.();
    if (shuffle) process.stderr.write(`\nshuffled with seed ${seed}: \`npx vitest run --sequence.seed=${seed}\` runs the same order\n`);
  };
}
