import { InternalError } from "../../core/errors.js";
import type { Reader, Tx } from "../store.js";
import type { IndexModel, Neighbour, VectorFilter, VectorIndex, VectorMeta } from "../vectors.js";
import type { PgDb } from "./connection.js";
import { connectionOf, withSettings } from "./transactions.js";

/**
 * The vector index: one table, `memory_embeddings`, keyed by `memory.pk`, holding each embedding as
 * a pgvector `vector(<dims>)` under an HNSW index (cosine), beside the metadata every filter of a
 * query uses (as SQLite's vec0 table keeps it): `vis_key` (`g` global, `p:<project>`, or
 * `a:<author>` for private entries), `owner_key` (the author of a private entry, '' otherwise: for
 * roles that see every project), `project_key` ('' for global), `type`, `agent_id`, `confidence`,
 * and `expires_ms` (epoch ms, NO_EXPIRY when none) so expired rows drop out at once.
 * The HNSW index (cosine) is on each embedding cast to `halfvec` (half precision: half the index, so
 * half the buffer cache, to hold): it only finds neighbours, which are then ordered by their exact
 * distance from the full vectors.
 * A query applies every filter in the WHERE of the index scan, so `k` counts only rows the caller
 * may see; pgvector's iterative scan (≥ 0.8) keeps the scan going past filtered-out rows.
 * Soft-deleted entries have no row; a hard-deleted entry's row goes with it (foreign key).
 * The table is made by `ensure`, not by a migration: its dimension is the model's.
 */
const TABLE = "memory_embeddings";
// Bump when the table's shape changes: a stored index of another layout is rebuilt (re-embedded).
const VECTOR_LAYOUT = "pgvector-v1";
// pgvector's HNSW indexes `vector` columns of at most 2000 dimensions (`halfvec` 4000): the table's
// limit is kept, so a model that fits one backend fits the other.
const MAX_DIMENSIONS = 2000;
// The graph's build: pgvector's default `m`, and ef_construction 200 rather than its 64. Migration
// 023 builds the same index for tables made before it.
const HNSW_BUILD = "m = 16, ef_construction = 200";
// Candidates HNSW gathers before the first row is returned (pgvector's default is 40; at most 1000).
// At 100,000 entries of the benchmark's notes, asked as search asks (40 neighbours, the first 10
// counted against exact search): the halfvec graph built with ef_construction 200 finds 93.4 % at
// 100, 96.8 % at 200, 97.9 % at 250 and 99.2 % at 300; the `vector` graph built with 64 found
// 93.3 % at 200, 95.8 % at 300 and 98.4 % at 400, the setting before, in 1.7 times the time of 250
// on the new one (docs/decisions.md, "PostgreSQL vectors as halfvec").
const MIN_EF_SEARCH = 250;
const MAX_EF_SEARCH = 1000;

type EnsureOutcome = "unchanged" | "created" | "reset";

const setMeta = async (db: PgDb, key: string, value: string): Promise<void> => {
  await db.run("INSERT INTO meta (key, value) VALUES (?, ?) ON CONFLICT (key) DO UPDATE SET value = excluded.value", key, value);
};

/** The model of the stored index; null when there is none, or it has another layout. */
async function storedModel(db: PgDb): Promise<IndexModel | null> {
  const row = await db.get<{ model: string | null; dimensions: string | null; layout: string | null; present: boolean }>(
    `SELECT (SELECT value FROM meta WHERE key = 'vector_model') AS model,
            (SELECT value FROM meta WHERE key = 'vector_dimensions') AS dimensions,
            (SELECT value FROM meta WHERE key = 'vector_layout') AS layout,
            to_regclass('${TABLE}') IS NOT NULL AS present`,
  );
  const dimensions = Number(row?.dimensions);
  return row?.model && row.present && row.layout === VECTOR_LAYOUT && dimensions > 0 ? { model: row.model, dimensions } : null;
}

/**
 * The HNSW index of a table of `dimensions`. Built over existing rows it holds the graph in
 * `maintenance_work_mem` while that suffices (several times faster than once it does not: 256 MB
 * holds about 200,000 entries of 512 dimensions), raised for the caller's transaction only.
 */
export async function createVectorIndex(db: PgDb, dimensions: number): Promise<void> {
  await db.run("SELECT set_config('maintenance_work_mem', '256MB', true) WHERE pg_size_bytes(current_setting('maintenance_work_mem')) < pg_size_bytes('256MB')");
  await db.exec(`CREATE INDEX ${TABLE}_hnsw ON ${TABLE} USING hnsw ((embedding::halfvec(${dimensions})) halfvec_cosine_ops) WITH (${HNSW_BUILD})`);
}

/**
 * (Re)creates the empty index table for `dimensions` and records model, dimensions and layout in
 * `meta`, inside the caller's transaction. Leaves `memory.embedding_model` alone: `ensure` clears
 * it, a copy from SQLite keeps it with the vectors it copies. `withIndex: false` leaves the HNSW
 * index out, for a caller that fills the table first (one build of the graph, not one insertion per
 * row) and then makes it with `createVectorIndex`.
 */
export async function createVectorTable(db: PgDb, model: string, dimensions: number, { withIndex = true } = {}): Promise<void> {
  if (!Number.isInteger(dimensions) || dimensions < 1 || dimensions > MAX_DIMENSIONS) {
    throw new InternalError("setup", `unsupported embedding dimensions ${dimensions}`);
  }
  await db.exec(`DROP TABLE IF EXISTS ${TABLE}`);
  // `dimensions` is a checked integer: DDL takes no parameters.
  await db.exec(
    `CREATE TABLE ${TABLE} (
      pk          BIGINT PRIMARY KEY REFERENCES memory (pk) ON DELETE CASCADE,
      embedding   vector(${dimensions}) NOT NULL,
      vis_key     TEXT COLLATE "C" NOT NULL,
      owner_key   TEXT COLLATE "C" NOT NULL,
      project_key TEXT COLLATE "C" NOT NULL,
      type        TEXT COLLATE "C" NOT NULL,
      agent_id    TEXT COLLATE "C" NOT NULL,
      confidence  DOUBLE PRECISION NOT NULL,
      expires_ms  BIGINT NOT NULL
    );
    CREATE INDEX ${TABLE}_vis ON ${TABLE} (vis_key);
    CREATE INDEX ${TABLE}_owner ON ${TABLE} (owner_key);`,
  );
  if (withIndex) await createVectorIndex(db, dimensions);
  await setMeta(db, "vector_model", model);
  await setMeta(db, "vector_dimensions", String(dimensions));
  await setMeta(db, "vector_layout", VECTOR_LAYOUT);
}

/**
 * The index scan's settings for `k` results on pgvector `version`. From 0.8 the scan goes on past
 * filtered-out rows until `k` pass; before, only a wide first gathering (`ef_search` at its
 * maximum) keeps a filtered result from coming up short.
 */
export function searchSettings(version: string, k: number): Record<string, string> {
  const [major = 0, minor = 0] = version.split(".").map(Number);
  if (major === 0 && minor < 8) return { "hnsw.ef_search": String(MAX_EF_SEARCH) };
  return { "hnsw.iterative_scan": "relaxed_order", "hnsw.ef_search": String(Math.min(MAX_EF_SEARCH, Math.max(MIN_EF_SEARCH, 2 * k))) };
}

/**
 * What each of a server's connections is set to when it opens (`PgStore.open`): the settings of a
 * search of up to 125 neighbours on pgvector ≥ 0.8, nearly every search. Such a search runs as one
 * statement; under other settings it needs a transaction of its own to set them in (three
 * statements more: begin, set, commit).
 */
export const CONNECTION_SEARCH_SETTINGS: Readonly<Record<string, string>> = searchSettings("0.8.0", 1);

const sameSettings = (a: Readonly<Record<string, string>>, b: Readonly<Record<string, string>>): boolean =>
  Object.keys(a).length === Object.keys(b).length && Object.entries(a).every(([name, value]) => b[name] === value);

/**
 * pgvector's binary form (`vector_send`/`vector_recv`: the dimension and a reserved word as int16,
 * then each float4, all big-endian), sent as a binary parameter (node-postgres sends a Buffer so)
 * to a `?::vector`. Printing 512 floats as text and parsing them back cost a write about 0.2 ms of
 * the server's CPU per vector sent, and PostgreSQL as much again.
 */
export function vectorBytes(vector: Float32Array): Buffer {
  const bytes = Buffer.allocUnsafe(4 + 4 * vector.length);
  bytes.writeInt16BE(vector.length, 0);
  bytes.writeInt16BE(0, 2);
  for (let i = 0; i < vector.length; i++) bytes.writeFloatBE(vector[i] as number, 4 + 4 * i);
  return bytes;
}

/** A vector from `vectorBytes`' form, as `vector_send` returns it (a bytea). */
function vectorFromBytes(bytes: Buffer): Float32Array {
  const dimensions = bytes.readInt16BE(0);
  if (bytes.length !== 4 + 4 * dimensions) throw new InternalError("invariant", `a stored vector of ${bytes.length} bytes claims ${dimensions} dimensions`);
  const vector = new Float32Array(dimensions);
  for (let i = 0; i < dimensions; i++) vector[i] = bytes.readFloatBE(4 + 4 * i);
  return vector;
}

export class PgVectorIndex implements VectorIndex {
  // Read on every query, changed only by `ensure`. Only a model found is kept: where several servers
  // share the database, one may create the index after another has looked and found none.
  private cachedModel: IndexModel | undefined;
  private version: string | undefined;

  constructor(private readonly transact: <T>(work: (tx: Tx) => Promise<T>) => Promise<T>) {}

  private async modelOf(db: PgDb): Promise<IndexModel | null> {
    if (this.cachedModel === undefined) {
      const stored = await storedModel(db);
      if (stored) this.cachedModel = stored;
      return stored;
    }
    return this.cachedModel;
  }

  async model(r: Reader): Promise<IndexModel | null> {
    return this.modelOf(connectionOf(r));
  }

  async ensure(model: string, dimensions: number): Promise<EnsureOutcome> {
    this.cachedModel = undefined;
    const outcome = await this.transact(async (tx): Promise<EnsureOutcome> => {
      // Servers starting together: the first sets the index up, the others then find it so.
      await tx.lock("vector-index");
      const db = connectionOf(tx);
      const current = await storedModel(db);
      if (current && current.model === model && current.dimensions === dimensions) return "unchanged";
      const existed = (await db.get("SELECT 1 FROM meta WHERE key = 'vector_model'")) !== undefined;
      await createVectorTable(db, model, dimensions);
      await db.run("UPDATE memory SET embedding_model = NULL WHERE embedding_model IS NOT NULL");
      return existed ? "reset" : "created";
    });
    this.cachedModel = { model, dimensions };
    return outcome;
  }

  async put(tx: Tx, pk: number, vector: Float32Array, meta: VectorMeta): Promise<void> {
    const db = connectionOf(tx);
    await db.run(
      `INSERT INTO ${TABLE} (pk, embedding, vis_key, owner_key, project_key, type, agent_id, confidence, expires_ms)
     VALUES (?, ?::vector, ?, ?, ?, ?, ?, ?, ?)
     ON CONFLICT (pk) DO UPDATE SET embedding = excluded.embedding, vis_key = excluded.vis_key, owner_key = excluded.owner_key,
       project_key = excluded.project_key, type = excluded.type, agent_id = excluded.agent_id,
       confidence = excluded.confidence, expires_ms = excluded.expires_ms`,
      pk,
      vectorBytes(vector),
      meta.visKey,
      meta.ownerKey,
      meta.projectKey,
      meta.type,
      meta.agentId,
      meta.confidence,
      meta.expiresMs,
    );
  }

  // Without an index there is nothing to change (and no table to name).
  async updateMeta(tx: Tx, pk: number, meta: VectorMeta): Promise<void> {
    const db = connectionOf(tx);
    if (!(await this.modelOf(db))) return;
    await db.run(
      `UPDATE ${TABLE} SET vis_key = ?, owner_key = ?, project_key = ?, type = ?, agent_id = ?, confidence = ?, expires_ms = ? WHERE pk = ?`,
      meta.visKey,
      meta.ownerKey,
      meta.projectKey,
      meta.type,
      meta.agentId,
      meta.confidence,
      meta.expiresMs,
      pk,
    );
  }

  async delete(tx: Tx, pk: number): Promise<void> {
    const db = connectionOf(tx);
    if (!(await this.modelOf(db))) return;
    await db.run(`DELETE FROM ${TABLE} WHERE pk = ?`, pk);
  }

  async get(r: Reader, pks: number[]): Promise<Map<number, Float32Array>> {
    const db = connectionOf(r);
    const vectors = new Map<number, Float32Array>();
    if (pks.length === 0) return vectors;
    if (!(await this.modelOf(db))) return vectors;
    const rows = await db.all<{ pk: number; embedding: Buffer }>(`SELECT pk, vector_send(embedding) AS embedding FROM ${TABLE} WHERE pk = ANY(?::bigint[])`, pks);
    for (const row of rows) vectors.set(row.pk, vectorFromBytes(row.embedding));
    return vectors;
  }

  // The table exists only once a model has set the index up.
  async renameAgent(tx: Tx, from: string, to: string): Promise<void> {
    const db = connectionOf(tx);
    const present = await db.get<{ found: boolean }>(`SELECT to_regclass('${TABLE}') IS NOT NULL AS found`);
    if (!present?.found) return;
    await db.run(`UPDATE ${TABLE} SET agent_id = ? WHERE agent_id = ?`, to, from);
    await db.run(`UPDATE ${TABLE} SET owner_key = ? WHERE owner_key = ?`, to, from);
    await db.run(`UPDATE ${TABLE} SET vis_key = 'a:' || ?::text WHERE vis_key = 'a:' || ?::text`, to, from);
  }

  /**
   * Every filter is in the WHERE of one HNSW scan ordered by cosine distance between halfvecs (the
   * index's expression, cast to the model's dimensions as the index was), so `k` counts only
   * matching rows; each row's distance is the exact one, between the full vectors. HNSW gathers
   * `hnsw.ef_search` candidates and filters them afterwards, which alone would cut a filtered
   * result short; `hnsw.iterative_scan = relaxed_order` (pgvector ≥ 0.8) has it scan on until `k`
   * rows pass (or `hnsw.max_scan_tuples` were visited). Relaxed order may hand rows back slightly
   * out of order, and half precision rounds, so the `k` found are sorted again by exact distance in
   * a materialized CTE, and `maxDistance` is applied there too, outside the scan (as pgvector's
   * documentation advises: inside, a distance bound makes the scan visit every far row). Taking
   * the `k` nearest matches and then dropping the far ones is what SQLite's index does.
   * The visibility keys are SQLite's `keysOf`: roles that see every project by `owner_key` ('' or
   * their own id), agents by `vis_key` (global, their private rows, and their projects', the
   * memberships read in the same statement).
   */
  async nearest(r: Reader, vector: Float32Array, k: number, filter: VectorFilter): Promise<Neighbour[]> {
    if (k <= 0) return [];
    const model = await this.modelOf(connectionOf(r));
    if (!model) return [];
    const query = vectorBytes(vector);
    const where: string[] = [];
    const params: unknown[] = [query];
    if ("viewpoint" in filter.within) {
      const { viewpoint } = filter.within;
      if (viewpoint.allProjects) {
        where.push("e.owner_key = ANY(?::text[])");
        params.push(["", viewpoint.agentId]);
      } else {
        where.push("e.vis_key = ANY(?::text[] || ARRAY(SELECT 'p:' || pm.project_id FROM project_members pm WHERE pm.agent_id = ?))");
        params.push(["g", `a:${viewpoint.agentId}`], viewpoint.agentId);
      }
    } else {
      where.push("e.vis_key = ?");
      params.push(filter.within.visKey);
    }
    where.push("e.expires_ms > ?::bigint");
    params.push(Math.floor(filter.nowMs));
    if (filter.projectKey !== undefined) {
      where.push("e.project_key = ?");
      params.push(filter.projectKey);
    }
    if (filter.types !== undefined) {
      where.push("e.type = ANY(?::text[])");
      params.push(filter.types);
    }
    if (filter.agentId !== undefined) {
      where.push("e.agent_id = ?");
      params.push(filter.agentId);
    }
    if (filter.confidenceMin !== undefined) {
      where.push("e.confidence >= ?::float8");
      params.push(filter.confidenceMin);
    }
    if (filter.tag !== undefined) {
      where.push("e.pk IN (SELECT memory_pk FROM memory_tags WHERE tag = ?)");
      params.push(filter.tag);
    }
    if (filter.excludePk !== undefined) {
      where.push("e.pk <> ?::bigint");
      params.push(filter.excludePk);
    }
    params.push(query, k);
    let outer = "";
    if (filter.maxDistance !== undefined) {
      outer = "WHERE distance <= ?::float8";
      params.push(filter.maxDistance);
    }
    const sql = `WITH found AS MATERIALIZED (
       SELECT e.pk, e.embedding <=> ?::vector AS distance FROM ${TABLE} e
       WHERE ${where.join(" AND ")}
       ORDER BY e.embedding::halfvec(${model.dimensions}) <=> ?::vector::halfvec(${model.dimensions}) LIMIT ?
     )
     SELECT pk, distance FROM found ${outer} ORDER BY distance, pk`;
    const settings = searchSettings(await this.extensionVersion(connectionOf(r)), k);
    if (sameSettings(settings, CONNECTION_SEARCH_SETTINGS)) return connectionOf(r).all<Neighbour>(sql, ...params);
    return withSettings(r, settings, (db) => db.all<Neighbour>(sql, ...params));
  }

  /** The installed pgvector's version, read once. */
  private async extensionVersion(db: PgDb): Promise<string> {
    this.version ??= (await db.get<{ version: string }>("SELECT extversion AS version FROM pg_extension WHERE extname = 'vector'"))?.version ?? "0.0.0";
    return this.version;
  }
}
