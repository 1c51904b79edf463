import Database from "better-sqlite3";
import pg from "pg";
import { InternalError } from "../core/errors.js";
import { loadMigrations, SchemaTooNewError } from "./migrations.js";
import { PgDb } from "./postgres/connection.js";
import { runMigrations } from "./postgres/migrate.js";
import { createVectorIndex, createVectorTable } from "./postgres/vectors.js";
import { connect, type Db } from "./sqlite/connection.js";
import { runMigrations as runSqliteMigrations, schemaVersion } from "./sqlite/migrate.js";
import { VECTOR_LAYOUT as SQLITE_VECTOR_LAYOUT } from "./sqlite/vectors.js";

/**
 * The tables a store holds, parents before children, each copied whole with its keys. Not copied:
 * `schema_migrations` (each side has its own), the vector index (copied apart, below), what
 * PostgreSQL derives itself (the keyword index), `quota_buckets` (an hour of counting, which
 * starts afresh) and `vector_changes` (the change log of SQLite's HNSW index; pgvector keeps its own). test/integration/migrate-store.test.ts holds this list to the SQLite schema, so a
 * table added later cannot be left out unnoticed.
 */
export const TABLES = [
  "meta",
  "agents",
  "projects",
  "project_members",
  "memory",
  "memory_tags",
  "memory_readers",
  "events",
  "event_audience",
  "idempotency",
  "tasks",
  "task_tags",
  "task_dependencies",
  "task_comments",
  "task_outcomes",
  "messages",
  "message_recipients",
  "handoffs",
  "archivist_state",
  "graph_edges",
  "logs",
  "ui_sessions",
  "ui_login_links",
  "jobs",
  "decisions",
  "captures",
  "decision_tags",
  "blueprints",
  "blueprint_runs",
  "blueprint_run_nodes",
  "compile_anchors",
  "feeds",
  "feed_items",
  "mesh_tokens",
  "mesh_links",
  "mesh_discovered",
  "mesh_suppressions",
  "oauth_clients",
  // Grants before what references them: their codes, refresh tokens and access tokens.
  "oauth_grants",
  "oauth_codes",
  "oauth_refresh_tokens",
  "oauth_tokens",
] as const;

/** Identity keys to move past the copied rows, so new rows never take a copied key. */
const IDENTITIES: Record<string, string> = {
  memory: "pk",
  events: "seq",
  tasks: "pk",
  task_comments: "pk",
  task_outcomes: "pk",
  messages: "pk",
  handoffs: "pk",
  graph_edges: "pk",
  logs: "pk",
  decisions: "pk",
  captures: "pk",
  blueprints: "pk",
  blueprint_runs: "pk",
  blueprint_run_nodes: "pk",
  compile_anchors: "pk",
  feeds: "pk",
  mesh_tokens: "pk",
  mesh_links: "pk",
};

// Rows per INSERT: PostgreSQL takes at most 65,535 parameters in one statement. A batch also ends
// at about BYTES_PER_INSERT of text, so entries near a large MAX_CONTENT_BYTES make no giant statement.
const ROWS_PER_INSERT = 200;
const BYTES_PER_INSERT = 8 * 1024 * 1024;

export interface CopyReport {
  /** Rows per table, as counted in both stores after the copy. */
  tables: { table: string; rows: number }[];
  vectors: number;
}

/**
 * Copies a SQLite store into an empty PostgreSQL one, every row with its keys (ids, seqs, key
 * hashes, times, vectors), in one transaction, then counts both sides table by table. Refuses a
 * target that holds anything; a count that differs rolls the copy back. The source is read in one
 * read transaction, so every table comes from the same moment of the file, a page at a time.
 */
export async function copySqliteToPostgres(file: string, url: string, onProgress: (table: string, rows: number) => void = () => undefined): Promise<CopyReport> {
  migrateSource(file);
  const source = connect(file, { readonly: true });
  const pool = new pg.Pool({ connectionString: url, max: 2 });
  try {
    await runMigrations(pool);
    const client = await pool.connect();
    try {
      const target = new PgDb(client);
      await refuseNonEmpty(target);
      // Ended when the connection closes.
      source.exec("BEGIN");
      await client.query("BEGIN");
      try {
        const report = await copyAll(source, target, onProgress);
        await client.query("COMMIT");
        return report;
      } catch (error) {
        await client.query("ROLLBACK");
        throw error;
      }
    } finally {
      client.release();
    }
  } finally {
    source.close();
    await pool.end();
  }
}

const notCairn = (file: string): InternalError => new InternalError("setup", `${file} is not a cairn database`);

/**
 * The source is read as the current code reads it: an older file is migrated in place first, on a
 * connection of its own, closed after. A current one is only read (it may be a read-only copy).
 * Anything but a cairn store is refused before anything is written to it.
 */
function migrateSource(file: string): void {
  const migrations = loadMigrations("sqlite");
  let probe: Db | undefined;
  let version: number;
  try {
    probe = connect(file, { readonly: true });
    // A cairn store's first migration is recorded as ours; another program's `schema_migrations` is not.
    const first = probe.get("SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = 'schema_migrations'")
      ? probe.get<{ name?: unknown }>("SELECT * FROM schema_migrations WHERE version = 1")?.name
      : undefined;
    if (first !== migrations[0]?.name) throw notCairn(file);
    version = schemaVersion(probe);
  } catch (error) {
    // Not an SQLite file at all.
    if (error instanceof Database.SqliteError && error.code === "SQLITE_NOTADB") throw notCairn(file);
    throw error;
  } finally {
    probe?.close();
  }
  const latest = migrations.at(-1)?.version ?? 0;
  if (version > latest) throw new SchemaTooNewError(version, latest);
  if (version === latest) return;
  const db = connect(file);
  try {
    runSqliteMigrations(db, migrations);
  } finally {
    db.close();
  }
}

async function refuseNonEmpty(target: PgDb): Promise<void> {
  for (const table of ["agents", "memory", "events", "tasks", "messages", "projects"]) {
    const found = await target.get<{ n: number }>(`SELECT count(*) AS n FROM ${table}`);
    if ((found?.n ?? 0) > 0) throw new InternalError("setup", `the target database is not empty (${table} has rows): migrate-store copies into an empty one only`);
  }
}

async function copyAll(source: Db, target: PgDb, onProgress: (table: string, rows: number) => void): Promise<CopyReport> {
  // The lease row exists in PostgreSQL from the start; it takes the source's values.
  const lease = source.get<Record<string, unknown>>("SELECT holder, token, acquired_at, expires_at FROM archivist_lease WHERE id = 1");
  if (lease) await target.run("UPDATE archivist_lease SET holder = ?, token = ?, acquired_at = ?, expires_at = ? WHERE id = 1", lease.holder, lease.token, lease.acquired_at, lease.expires_at);
  const metaValue = (key: string): string | undefined => source.get<{ value: string }>("SELECT value FROM meta WHERE key = ?", key)?.value;
  const vectorModel = metaValue("vector_model");
  const dimensions = Number(metaValue("vector_dimensions") ?? 0);
  // As SqliteVectorIndex reads its index: one of another layout, or without its table, is not one
  // (the server on PostgreSQL then makes its own and embeds every entry again).
  const hasIndex = vectorModel !== undefined && dimensions > 0 && metaValue("vector_layout") === SQLITE_VECTOR_LAYOUT && source.get("SELECT 1 FROM sqlite_master WHERE name = 'memory_vectors'") !== undefined;
  // AUTOINCREMENT remembers seqs that retention pruned: new events must still come after them.
  const usedSeq = source.get<{ seq: number }>("SELECT seq FROM sqlite_sequence WHERE name = 'events'")?.seq ?? 0;
  const tables: CopyReport["tables"] = [];
  for (const table of TABLES) {
    const read = table === "meta" ? "SELECT * FROM meta WHERE key NOT LIKE 'vector_%'" : `SELECT * FROM ${table}`;
    const rows = await insertRows(target, table, source.prepare(read).iterate());
    const identity = IDENTITIES[table];
    if (identity !== undefined) {
      const used = table === "events" ? usedSeq : 0;
      await target.run(`SELECT setval(pg_get_serial_sequence('${table}', '${identity}'), GREATEST(?::bigint, (SELECT COALESCE(max(${identity}), 0) FROM ${table}), 1))`, used);
    }
    const counted = (await target.get<{ n: number }>(`SELECT count(*) AS n FROM ${table}`))?.n ?? 0;
    if (counted !== rows) throw new InternalError("invariant", `${table}: ${rows} rows read, ${counted} in the target`);
    tables.push({ table, rows: counted });
    onProgress(table, counted);
  }
  const vectors = hasIndex ? await copyVectors(source, target, vectorModel, dimensions) : 0;
  onProgress("vectors", vectors);
  return { tables, vectors };
}

/** A row in words, for a message: its id or key if it has one. */
const rowName = (row: Record<string, unknown>): string => {
  const key = row.id ?? row.pk ?? row.key ?? row.name ?? row.agent_id;
  return typeof key === "string" || typeof key === "number" ? String(key) : JSON.stringify(row).slice(0, 200);
};

/**
 * Inserts `rows` as they are read, a batch at a time; returns how many. PostgreSQL's text cannot
 * hold U+0000, which SQLite's can: such a row is named, so it can be fixed before copying again.
 */
async function insertRows(target: PgDb, table: string, rows: Iterable<Record<string, unknown>>, cast: Record<string, string> = {}): Promise<number> {
  let batch: Record<string, unknown>[] = [];
  let bytes = 0;
  let count = 0;
  for (const row of rows) {
    for (const [column, value] of Object.entries(row)) {
      if (typeof value === "string" && value.includes("\u0000")) {
        throw new InternalError("setup", `${table} ${rowName(row)}: ${column} holds a NUL character (U+0000), which PostgreSQL cannot store; edit or delete it on SQLite, then copy again`);
      }
      if (typeof value === "string" || Buffer.isBuffer(value)) bytes += value.length;
    }
    batch.push(row);
    count++;
    if (batch.length === ROWS_PER_INSERT || bytes >= BYTES_PER_INSERT) {
      await insertBatch(target, table, batch, cast);
      batch = [];
      bytes = 0;
    }
  }
  await insertBatch(target, table, batch, cast);
  return count;
}

async function insertBatch(target: PgDb, table: string, batch: Record<string, unknown>[], cast: Record<string, string>): Promise<void> {
  const first = batch[0];
  if (!first) return;
  const columns = Object.keys(first);
  const placeholders = `(${columns.map((column) => (cast[column] ? `?::${cast[column]}` : "?")).join(", ")})`;
  await target.run(
    `INSERT INTO ${table} (${columns.join(", ")}) VALUES ${batch.map(() => placeholders).join(", ")}`,
    ...batch.flatMap((row) => columns.map((column) => row[column])),
  );
}

/** The vector index: model and dimensions recorded as PgVectorIndex.ensure records them, then every vector with its filters. */
async function copyVectors(source: Db, target: PgDb, model: string, dimensions: number): Promise<number> {
  // The graph is built once over every row, faster than row by row as they are inserted.
  await createVectorTable(target, model, dimensions, { withIndex: false });
  const rows = source
    .prepare(
      `SELECT e.pk, e.embedding, v.vis_key, v.owner_key, v.project_key, v.type, v.agent_id, v.confidence, v.expires_ms
       FROM memory_embeddings e JOIN memory_vectors v ON v.pk = e.pk`,
    )
    .iterate() as Iterable<{ pk: number; embedding: Buffer; vis_key: string; owner_key: string; project_key: string; type: string; agent_id: string; confidence: number; expires_ms: number }>;
  function* asVectors() {
    for (const row of rows) {
      const vector = new Float32Array(row.embedding.buffer.slice(row.embedding.byteOffset, row.embedding.byteOffset + row.embedding.byteLength));
      yield { ...row, embedding: `[${Array.from(vector).join(",")}]`, expires_ms: Number(row.expires_ms) };
    }
  }
  const read = await insertRows(target, "memory_embeddings", asVectors(), { embedding: "vector" });
  const counted = (await target.get<{ n: number }>("SELECT count(*) AS n FROM memory_embeddings"))?.n ?? 0;
  if (counted !== read) throw new InternalError("invariant", `vectors: ${read} read, ${counted} in the target`);
  await createVectorIndex(target, dimensions);
  return counted;
}
