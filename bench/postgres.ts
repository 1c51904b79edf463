// PostgreSQL for the benchmarks: with BENCH_DATABASE_URL set, every server runs on a database of
// its own, created here and dropped when its run ends; seeded stores are cloned from a template
// database that is built once from the cached SQLite store and kept across runs.
import { createHash } from "node:crypto";
import { readdirSync, readFileSync } from "node:fs";
import { basename, join } from "node:path";
import pg from "pg";
import { migrationsDir } from "../src/core/paths.js";
import { copySqliteToPostgres } from "../src/store/copy.js";
import type { Progress } from "./lib.js";
import { processCpuMs } from "./proc.js";

/** Databases of one server run, and of scale's shared servers; any left by a dead run are dropped at start. */
const RUN_PREFIX = "cairn_bench_";
/** Seed templates, kept across runs (and so outside RUN_PREFIX). */
const TEMPLATE_PREFIX = "cairn_seed_";
/** A template being copied into; renamed to its TEMPLATE_PREFIX name only once complete. */
const BUILDING_PREFIX = "cairn_seedtmp_";

export const benchDatabaseUrl = (): string | undefined => process.env.BENCH_DATABASE_URL || undefined;

export const backend = (): "sqlite" | "postgres" => (benchDatabaseUrl() ? "postgres" : "sqlite");

function serverUrl(): string {
  const url = benchDatabaseUrl();
  if (!url) throw new Error("BENCH_DATABASE_URL is not set");
  return url;
}

/** The URL of database `name` on the BENCH_DATABASE_URL server. */
export function databaseUrl(name: string): string {
  const url = new URL(serverUrl());
  url.pathname = `/${name}`;
  return url.toString();
}

let admin: pg.Pool | undefined;

// One connection is enough: CREATE and DROP DATABASE cannot run in a transaction and are issued one at a time.
function adminPool(): pg.Pool {
  if (!admin) {
    admin = new pg.Pool({ connectionString: serverUrl(), max: 1, allowExitOnIdle: true });
    admin.on("error", () => undefined);
  }
  return admin;
}

export async function closeAdmin(): Promise<void> {
  const pool = admin;
  admin = undefined;
  await pool?.end();
}

const quoted = (name: string): string => `"${name.replaceAll('"', '""')}"`;

async function databaseNames(prefix: string): Promise<{ name: string; connections: number }[]> {
  const { rows } = await adminPool().query<{ name: string; connections: number }>(
    `SELECT d.datname AS name, (SELECT count(*) FROM pg_stat_activity a WHERE a.datname = d.datname)::int AS connections
     FROM pg_database d WHERE starts_with(d.datname, $1)`,
    [prefix],
  );
  return rows;
}

async function exists(name: string): Promise<boolean> {
  const { rows } = await adminPool().query("SELECT 1 FROM pg_database WHERE datname = $1", [name]);
  return rows.length > 0;
}

export async function dropDatabase(name: string): Promise<void> {
  await adminPool().query(`DROP DATABASE IF EXISTS ${quoted(name)} WITH (FORCE)`);
}

let created = 0;

// The pid in the name lets a later run tell a database of a dead run from one of a run in progress.
const uniqueName = (prefix: string): string => `${prefix}${process.pid}_${++created}_${Math.random().toString(36).slice(2, 8)}`;

/** A new database, empty or a copy of `template`; returns its name. */
export async function createDatabase(template?: string): Promise<string> {
  const name = uniqueName(RUN_PREFIX);
  await adminPool().query(`CREATE DATABASE ${quoted(name)}${template ? ` TEMPLATE ${quoted(template)}` : ""}`);
  return name;
}

function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (error) {
    return (error as NodeJS.ErrnoException).code === "EPERM";
  }
}

/**
 * Drops the run databases and half-built templates that a crashed or interrupted run left behind:
 * those whose run is gone and that nothing is connected to. Returns how many it dropped.
 */
export async function dropStaleDatabases(progress: Progress): Promise<number> {
  let dropped = 0;
  for (const prefix of [RUN_PREFIX, BUILDING_PREFIX]) {
    for (const { name, connections } of await databaseNames(prefix)) {
      const pid = Number(/^\D*(\d+)_/.exec(name)?.[1]);
      if (alive(pid) && pid !== process.pid) continue;
      if (connections > 0) {
        progress(`postgres: leaving ${name}: ${connections} connection(s) still use it (a server of an earlier run?)`);
        continue;
      }
      await dropDatabase(name);
      dropped++;
    }
  }
  if (dropped > 0) progress(`postgres: dropped ${dropped} database(s) left by earlier runs`);
  return dropped;
}

// ---- the database of each data directory ----

// A data directory and its database live and go together: servers started on one directory one
// after the other (paraphrase restarts its server per setting) see the same store.
const databases = new Map<string, string>();

/** DATABASE_URL for a server on `dataDir`, or nothing on SQLite or before the directory has a database. */
export function databaseEnv(dataDir: string): { DATABASE_URL?: string } {
  const name = databases.get(dataDir);
  return name === undefined ? {} : { DATABASE_URL: databaseUrl(name) };
}

/** The URL of `dataDir`'s database, created empty if it has none yet. */
export async function ensureDatabase(dataDir: string): Promise<string> {
  let name = databases.get(dataDir);
  if (name === undefined) {
    name = await createDatabase();
    databases.set(dataDir, name);
  }
  return databaseUrl(name);
}

/** Gives `dataDir` a fresh copy of `template` as its database. */
export async function cloneInto(template: string, dataDir: string): Promise<void> {
  await releaseDatabase(dataDir);
  databases.set(dataDir, await createDatabase(template));
}

export async function releaseDatabase(dataDir: string): Promise<void> {
  const name = databases.get(dataDir);
  if (name === undefined) return;
  databases.delete(dataDir);
  await dropDatabase(name);
}

// ---- seed templates ----

/**
 * Changes with any of PostgreSQL's migrations: unlike a cached SQLite file, which is migrated
 * forward, a template is rebuilt, since a migration edited in place would never be applied to it.
 */
function postgresFingerprint(): string {
  const hash = createHash("sha256");
  for (const file of readdirSync(join(migrationsDir, "postgres")).sort()) hash.update(file).update(readFileSync(join(migrationsDir, "postgres", file)));
  return hash.digest("hex").slice(0, 8);
}

/** The cached SQLite file's key (size, corpus, schema) as a database name, without PostgreSQL's part. */
const seedKey = (file: string): string => `${TEMPLATE_PREFIX}${basename(file, ".db").replace(/[^a-z0-9]+/gi, "_").toLowerCase()}_`;

/** The template's name: the seed's key and PostgreSQL's schema. */
const templateName = (file: string): string => `${seedKey(file)}${postgresFingerprint()}`;

async function withDatabase<T>(name: string, work: (pool: pg.Pool) => Promise<T>): Promise<T> {
  const pool = new pg.Pool({ connectionString: databaseUrl(name), max: 1 });
  pool.on("error", () => undefined);
  try {
    return await work(pool);
  } finally {
    await pool.end();
  }
}

async function countRows(pool: pg.Pool, table: string): Promise<number> {
  const { rows } = await pool.query<{ n: string }>(`SELECT count(*) AS n FROM ${table}`);
  return Number(rows[0]?.n ?? 0);
}

/**
 * Whether a template holds the whole seed: it is renamed into place only after the copy commits,
 * but a count of its entries and their vectors also catches one damaged since.
 */
async function complete(name: string, entries: number): Promise<boolean> {
  return withDatabase(name, async (pool) => {
    const tables = await pool.query("SELECT to_regclass('memory') IS NOT NULL AND to_regclass('memory_embeddings') IS NOT NULL AS found");
    if (!(tables.rows[0] as { found: boolean } | undefined)?.found) return false;
    return (await countRows(pool, "memory")) === entries && (await countRows(pool, "memory_embeddings")) === entries;
  });
}

const verified = new Set<string>();

/**
 * The template database holding the cached SQLite store `file` of `entries` entries: reused when
 * it is complete, else copied (as `cairn migrate-store` copies) into a fresh database, analysed,
 * and renamed into place.
 */
export async function seedTemplate(file: string, entries: number, progress: Progress): Promise<string> {
  const name = templateName(file);
  if (verified.has(name)) return name;
  if ((await exists(name)) && !(await complete(name, entries))) {
    progress(`postgres: template ${name} is incomplete; rebuilding it`);
    await dropDatabase(name);
  }
  if (!(await exists(name))) {
    // Templates of the same seed for an older schema are no use any more, and a large one is large;
    // BENCH_KEEP_TEMPLATES=1 keeps them, where branches of another schema share the server.
    if (!process.env.BENCH_KEEP_TEMPLATES) {
      for (const outdated of await databaseNames(seedKey(file))) {
        if (outdated.connections === 0) await dropDatabase(outdated.name);
      }
    }
    const building = uniqueName(BUILDING_PREFIX);
    const started = performance.now();
    progress(`postgres: copying ${basename(file)} into template ${name} (once; later runs reuse it)`);
    await adminPool().query(`CREATE DATABASE ${quoted(building)}`);
    try {
      await copySqliteToPostgres(file, databaseUrl(building));
      // Clones inherit the planner statistics and visibility hints, as a store that has been in use would have them.
      await withDatabase(building, (pool) => pool.query("VACUUM ANALYZE"));
      await adminPool().query(`ALTER DATABASE ${quoted(building)} RENAME TO ${quoted(name)}`);
    } catch (error) {
      await dropDatabase(building);
      // Another run finished the same template first: use theirs.
      if (!(await exists(name))) throw error;
    }
    progress(`postgres: template ready in ${Math.round((performance.now() - started) / 1000)} s`);
  }
  verified.add(name);
  return name;
}

/** Runs one statement on the database at `url` and returns its rows. */
export async function query<T extends pg.QueryResultRow>(url: string, sql: string, params: unknown[] = []): Promise<T[]> {
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  try {
    return (await client.query<T>(sql, params)).rows;
  } finally {
    await client.end();
  }
}

/** "15.4", for the environment block. */
export async function serverVersion(): Promise<string> {
  const { rows } = await adminPool().query<{ server_version: string }>("SHOW server_version");
  return rows[0]?.server_version ?? "?";
}

/**
 * CPU ms used so far by each backend connected to database `name`: PostgreSQL's share of a run on
 * a machine it shares with the servers. Null when its processes are not visible from here (another
 * host or container).
 */
export async function backendCpu(name: string): Promise<Map<number, number> | null> {
  const { rows } = await adminPool().query<{ pid: number }>("SELECT pid FROM pg_stat_activity WHERE datname = $1", [name]);
  const cpu = new Map<number, number>();
  for (const { pid } of rows) {
    try {
      cpu.set(pid, processCpuMs(pid));
    } catch {
      // Gone since the query, or not ours to read.
    }
  }
  return rows.length > 0 && cpu.size === 0 ? null : cpu;
}

/** CPU ms the backends used between two `backendCpu` readings (a backend that ended in between is missed). */
export function backendCpuDelta(before: Map<number, number> | null, after: Map<number, number> | null): number | null {
  if (!before || !after) return null;
  let total = 0;
  for (const [pid, ms] of after) total += ms - (before.get(pid) ?? 0);
  return total;
}

/**
 * Whether the vector index fits in PostgreSQL's buffer cache: an HNSW search reads a few thousand
 * of the index's pages, and an index larger than `shared_buffers` is read back from the operating
 * system on every query (docs/operations.md, "Sizing PostgreSQL for search").
 */
export async function vectorIndexFit(url: string): Promise<{ shared_buffers: string; vector_index_mb: number }> {
  const [row] = await query<{ shared_buffers: string; bytes: string | null }>(
    url,
    "SELECT current_setting('shared_buffers') AS shared_buffers, pg_relation_size(to_regclass('memory_embeddings_hnsw')) AS bytes",
  );
  return { shared_buffers: row?.shared_buffers ?? "?", vector_index_mb: Math.round(Number(row?.bytes ?? 0) / 1048576) };
}
