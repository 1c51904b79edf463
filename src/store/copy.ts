import pg from "pg";
import { InternalError } from "../core/errors.js";
import { PgDb } from "./postgres/connection.js";
import { runMigrations } from "./postgres/migrate.js";
import { createVectorTable } from "./postgres/vectors.js";
import { connect, type Db } from "./sqlite/connection.js";
import { runMigrations as runSqliteMigrations } from "./sqlite/migrate.js";

/**
 * The tables a store holds, parents before children, each copied whole with its keys. Not copied:
 * `schema_migrations` (each side has its own), the vector index (copied apart, below) and what
 * PostgreSQL derives itself (the keyword index).
 */
const TABLES = [
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
  "oauth_tokens",
  "archivist_state",
  "graph_edges",
  "logs",
  "ui_sessions",
  "ui_login_links",
  "jobs",
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
};

// Rows per INSERT: PostgreSQL takes at most 65,535 parameters in one statement.
const ROWS_PER_INSERT = 200;

export interface CopyReport {
  /** Rows per table, as counted in both stores after the copy. */
  tables: { table: string; rows: number }[];
  vectors: number;
}

/**
 * Copies a SQLite store into an empty PostgreSQL one, every row with its keys (ids, seqs, key
 * hashes, times, vectors), in one transaction, then counts both sides table by table. Refuses a
 * target that holds anything; a count that differs rolls the copy back.
 */
export async function copySqliteToPostgres(file: string, url: string, onProgress: (table: string, rows: number) => void = () => undefined): Promise<CopyReport> {
  const source = connect(file, { readonly: true });
  const pool = new pg.Pool({ connectionString: url, max: 2 });
  try {
    if (source.get<{ n: number }>("SELECT count(*) AS n FROM sqlite_master WHERE name = 'schema_migrations'")?.n !== 1) {
      throw new InternalError("setup", `${file} is not a cairn database`);
    }
    // The source is read as the current code reads it: an older file is migrated in place first.
    runSqliteMigrations(connect(file));
    await runMigrations(pool);
    const client = await pool.connect();
    try {
      const target = new PgDb(client);
      await refuseNonEmpty(target);
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
  const vectorModel = source.get<{ value: string }>("SELECT value FROM meta WHERE key = 'vector_model'")?.value;
  const dimensions = Number(source.get<{ value: string }>("SELECT value FROM meta WHERE key = 'vector_dimensions'")?.value ?? 0);
  const tables: CopyReport["tables"] = [];
  for (const table of TABLES) {
    const rows = table === "meta" ? source.all<Record<string, unknown>>("SELECT * FROM meta WHERE key NOT LIKE 'vector_%'") : source.all<Record<string, unknown>>(`SELECT * FROM ${table}`);
    await insertRows(target, table, rows);
    const identity = IDENTITIES[table];
    if (identity !== undefined) {
      // AUTOINCREMENT remembers seqs that retention pruned: new events must still come after them.
      const used = table === "events" ? (source.get<{ seq: number }>("SELECT seq FROM sqlite_sequence WHERE name = 'events'")?.seq ?? 0) : 0;
      await target.run(`SELECT setval(pg_get_serial_sequence('${table}', '${identity}'), GREATEST(?::bigint, (SELECT COALESCE(max(${identity}), 0) FROM ${table}), 1))`, used);
    }
    const counted = (await target.get<{ n: number }>(`SELECT count(*) AS n FROM ${table}`))?.n ?? 0;
    if (counted !== rows.length) throw new InternalError("invariant", `${table}: ${rows.length} rows read, ${counted} in the target`);
    tables.push({ table, rows: counted });
    onProgress(table, counted);
  }
  const vectors = vectorModel && dimensions > 0 ? await copyVectors(source, target, vectorModel, dimensions) : 0;
  onProgress("vectors", vectors);
  return { tables, vectors };
}

async function insertRows(target: PgDb, table: string, rows: Record<string, unknown>[]): Promise<void> {
  const first = rows[0];
  if (!first) return;
  const columns = Object.keys(first);
  for (let start = 0; start < rows.length; start += ROWS_PER_INSERT) {
    const batch = rows.slice(start, start + ROWS_PER_INSERT);
    const values = batch.map(() => `(${columns.map(() => "?").join(", ")})`).join(", ");
    await target.run(`INSERT INTO ${table} (${columns.join(", ")}) VALUES ${values}`, ...batch.flatMap((row) => columns.map((column) => row[column])));
  }
}

/** The vector index: model and dimensions recorded as PgVectorIndex.ensure records them, then every vector with its filters. */
async function copyVectors(source: Db, target: PgDb, model: string, dimensions: number): Promise<number> {
  await createVectorTable(target, model, dimensions);
  const rows = source.all<{ pk: number; embedding: Buffer; vis_key: string; owner_key: string; project_key: string; type: string; agent_id: string; confidence: number; expires_ms: number }>(
    `SELECT e.pk, e.embedding, v.vis_key, v.owner_key, v.project_key, v.type, v.agent_id, v.confidence, v.expires_ms
     FROM memory_embeddings e JOIN memory_vectors v ON v.pk = e.pk`,
  );
  for (let start = 0; start < rows.length; start += ROWS_PER_INSERT) {
    const batch = rows.slice(start, start + ROWS_PER_INSERT);
    const values = batch.map(() => "(?, ?::vector, ?, ?, ?, ?, ?, ?, ?)").join(", ");
    await target.run(
      `INSERT INTO memory_embeddings (pk, embedding, vis_key, owner_key, project_key, type, agent_id, confidence, expires_ms) VALUES ${values}`,
      ...batch.flatMap((row) => {
        const vector = new Float32Array(row.embedding.buffer.slice(row.embedding.byteOffset, row.embedding.byteOffset + row.embedding.byteLength));
        return [row.pk, `[${Array.from(vector).join(",")}]`, row.vis_key, row.owner_key, row.project_key, row.type, row.agent_id, row.confidence, Number(row.expires_ms)];
      }),
    );
  }
  const counted = (await target.get<{ n: number }>("SELECT count(*) AS n FROM memory_embeddings"))?.n ?? 0;
  if (counted !== rows.length) throw new InternalError("invariant", `vectors: ${rows.length} read, ${counted} in the target`);
  return counted;
}
