import { spawnSync } from "node:child_process";
import { join } from "node:path";
import pg from "pg";
import { PgDb } from "../../src/store/postgres/connection.js";
import { connect } from "../../src/store/sqlite/connection.js";

/**
 * The suite runs on SQLite unless CAIRN_TEST_DATABASE_URL names a PostgreSQL server (`npm run
 * test:postgres`): then every test server gets a database of its own, cloned from a migrated
 * template that test/global-setup.ts makes (and drops, with every clone, at the end).
 */
export const POSTGRES_URL = process.env.CAIRN_TEST_DATABASE_URL;
export const onPostgres = POSTGRES_URL !== undefined && POSTGRES_URL !== "";

const prefix = (): string => process.env.CAIRN_TEST_DATABASE_PREFIX ?? "cairn_test_";
export const templateDatabase = (): string => `${prefix()}template`;

export function databaseUrl(base: string, database: string): string {
  const url = new URL(base);
  url.pathname = `/${database}`;
  return url.toString();
}

/** The PATH psql is found on: a test may empty process.env.PATH to start a server that finds no git. */
const PATH_AT_LOAD = process.env.PATH;

/** Runs statements as the server's administrator, each on its own, synchronously (psql): tests set up in sync code. */
export function adminSql(...statements: string[]): void {
  const args = [POSTGRES_URL as string, "-qAtX", "-v", "ON_ERROR_STOP=1", ...statements.flatMap((sql) => ["-c", sql])];
  const result = spawnSync("psql", args, { encoding: "utf8", env: { ...process.env, PATH: PATH_AT_LOAD } });
  if (result.status !== 0) throw new Error(`psql failed: ${result.error?.message ?? result.stderr}`);
}

/**
 * A test database's commits return before their WAL reaches the disk. What another connection
 * sees, and when, is unchanged — every race the suite proves stays a race — and only a crash of
 * the PostgreSQL server itself, which no test makes, could lose a commit; the suite's tens of
 * thousands of commits stop waiting for an fdatasync each. (A database's settings are not copied
 * from its template, so each clone gets it.)
 */
const noCommitFlush = (name: string): string => `ALTER DATABASE "${name}" SET synchronous_commit = off`;

/** The database of each data directory this process has given one to. */
const assigned = new Map<string, string>();
/**
 * Databases cloned ahead, waiting for a server: a clone costs the server ~200 ms, so while tests
 * run a connection of this process's own clones the next few in the background, and a server
 * that finds one waiting takes it at once.
 */
const ready: string[] = [];
const AHEAD = 3;
let cloned = 0;
let cloning = false;

const newName = (): string => `${prefix()}${process.pid}_${(cloned++).toString(36)}`;

function cloneAhead(): void {
  if (cloning || ready.length >= AHEAD) return;
  cloning = true;
  const admin = new pg.Client({ connectionString: POSTGRES_URL });
  admin.on("error", () => undefined);
  void (async () => {
    try {
      await admin.connect();
      while (ready.length < AHEAD) {
        const name = newName();
        await admin.query(`CREATE DATABASE "${name}" TEMPLATE "${templateDatabase()}"`);
        await admin.query(noCommitFlush(name));
        ready.push(name);
      }
    } catch {
      // A server that finds none waiting clones its own.
    } finally {
      cloning = false;
      await admin.end().catch(() => undefined);
    }
  })();
}

/**
 * The DATABASE_URL of the server whose data directory is `dataDir` (the same database for a
 * restart on the same directory); undefined on SQLite.
 */
export function databaseUrlFor(dataDir: string): string | undefined {
  if (!onPostgres) return undefined;
  let name = assigned.get(dataDir);
  if (name === undefined) {
    name = ready.shift();
    if (name === undefined) {
      name = newName();
      adminSql(`CREATE DATABASE "${name}" TEMPLATE "${templateDatabase()}"`, noCommitFlush(name));
    }
    assigned.set(dataDir, name);
  }
  cloneAhead();
  return databaseUrl(POSTGRES_URL as string, name);
}

export interface DatabaseHandle {
  all<T = Record<string, unknown>>(sql: string, ...params: unknown[]): Promise<T[]>;
  get<T = Record<string, unknown>>(sql: string, ...params: unknown[]): Promise<T | undefined>;
  run(sql: string, ...params: unknown[]): Promise<void>;
}

/**
 * Runs `work` on a connection of its own to the database of the server in `dataDir` (`?`
 * parameters on either backend), closed after. What it writes the server's next read sees.
 */
export async function withDatabase<T>(dataDir: string, work: (db: DatabaseHandle) => Promise<T>): Promise<T> {
  const url = databaseUrlFor(dataDir);
  if (url === undefined) {
    const db = connect(join(dataDir, "cairn.db"));
    try {
      return await work({
        all: (sql, ...params) => Promise.resolve(db.all(sql, ...params)),
        get: (sql, ...params) => Promise.resolve(db.get(sql, ...params)),
        run: (sql, ...params) => {
          db.run(sql, ...params);
          return Promise.resolve();
        },
      });
    } finally {
      db.close();
    }
  }
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  try {
    const db = new PgDb(client);
    return await work({
      all: (sql, ...params) => db.all(sql, ...params),
      get: (sql, ...params) => db.get(sql, ...params),
      run: async (sql, ...params) => {
        await db.run(sql, ...params);
      },
    });
  } finally {
    await client.end();
  }
}

function run(command: string, args: string[]): void {
  const result = spawnSync(command, args, { encoding: "utf8" });
  if (result.status !== 0) throw new Error(`${command} failed: ${result.stderr}`);
}

/** PostgreSQL's backup as docs/operations.md gives it: `pg_dump` in its custom format. */
export function dumpDatabase(dataDir: string, file: string): void {
  run("pg_dump", ["--format=custom", `--file=${file}`, databaseUrlFor(dataDir) as string]);
}

/** And its restore, with the server stopped: the database made afresh, then `pg_restore` into it. */
export function restoreDatabase(dataDir: string, file: string): void {
  const url = databaseUrlFor(dataDir) as string;
  const name = new URL(url).pathname.slice(1);
  adminSql(`DROP DATABASE "${name}" WITH (FORCE)`);
  adminSql(`CREATE DATABASE "${name}"`, noCommitFlush(name));
  run("pg_restore", ["--exit-on-error", `--dbname=${url}`, file]);
}

/** Every text value of every table of the server's database in `dataDir`, each row as one string (blobs as latin1). */
export async function databaseText(dataDir: string): Promise<string[]> {
  return withDatabase(dataDir, async (db) => {
    const rows: string[] = [];
    if (onPostgres) {
      const tables = await db.all<{ name: string }>("SELECT table_name AS name FROM information_schema.tables WHERE table_schema = current_schema() AND table_type = 'BASE TABLE'");
      for (const { name } of tables) rows.push(...(await db.all<{ row: string }>(`SELECT t::text AS row FROM "${name}" t`)).map((row) => row.row));
      return rows;
    }
    const tables = await db.all<{ name: string; sql: string | null }>("SELECT name, sql FROM sqlite_master WHERE type = 'table'");
    for (const { name, sql } of tables) {
      if (sql?.toUpperCase().startsWith("CREATE VIRTUAL TABLE")) continue;
      for (const row of await db.all(`SELECT * FROM "${name}"`)) {
        rows.push(Object.values(row).map((value) => (Buffer.isBuffer(value) ? value.toString("latin1") : String(value))).join("\u0001"));
      }
    }
    return rows;
  });
}
