import { randomBytes } from "node:crypto";
import { InternalError } from "../../core/errors.js";
import type { Reader, Tx } from "../store.js";
import type { IndexModel, IndexStatus, Neighbour, VectorFilter, VectorIndex, VectorMeta } from "../vectors.js";
import type { Viewpoint } from "../visibility.js";
import type { SqliteAnn } from "./ann.js";
import type { BitMirror, LocalChange } from "./bit-mirror.js";
import type { MirrorFilter } from "./mirror-table.js";
import type { Db } from "./connection.js";
import { connectionOf } from "./transactions.js";
import type { VectorMetaRow } from "./vector-log.js";

/**
 * The vector index, in two tables keyed by `memory.pk`:
 * - `memory_vectors`, a sqlite-vec `vec0` table holding each embedding binary-quantized (one bit
 *   per dimension) with metadata columns for every filter a query uses, so the KNN scan applies
 *   visibility and filters itself and `k` counts only rows the caller may see:
 *   `vis_key` (`g` global, `p:<project>`, or `a:<author>` for private entries), `owner_key` (the
 *   author of a private entry, '' otherwise: for roles that see every project), `project_key`
 *   ('' for global), `type`, `agent_id`, `confidence`, and `expires_ms` (epoch ms, NO_EXPIRY when
 *   none) so expired rows drop out at once;
 * - `memory_embeddings`, the full float32 vectors.
 * A query scans the bits (Hamming distance) for a few times `k` candidates, then ranks those by
 * exact cosine distance. On this class of machine vec0 scans float vectors at about 1 µs a row,
 * while the bit scan with a small `k` is an order of magnitude cheaper; the exact re-ranking keeps
 * the result the one cosine would give (99 % of the exact top 10 with 4× candidates, measured).
 * Soft-deleted entries have no rows in either table.
 */
const TABLE = "memory_vectors";
const EMBEDDINGS = "memory_embeddings";
// Bump when the tables' shape changes: a stored index of another layout is rebuilt (re-embedded).
export const VECTOR_LAYOUT = "bits-v1";

type EnsureOutcome = "unchanged" | "created" | "reset";

const metaValue = (db: Db, key: string): string | undefined =>
  db.get<{ value: string }>("SELECT value FROM meta WHERE key = ?", key)?.value;

const setMeta = (db: Db, key: string, value: string): void => {
  db.run("INSERT INTO meta (key, value) VALUES (?, ?) ON CONFLICT (key) DO UPDATE SET value = excluded.value", key, value);
};

/** The model of the stored index; null when there is none, or it has another layout. */
function storedModel(db: Db): IndexModel | null {
  const model = metaValue(db, "vector_model");
  const dimensions = Number(metaValue(db, "vector_dimensions"));
  const layout = metaValue(db, "vector_layout");
  const exists = db.get("SELECT 1 FROM sqlite_master WHERE name = ?", TABLE);
  return model && exists && layout === VECTOR_LAYOUT && dimensions > 0 ? { model, dimensions } : null;
}

/**
 * Appends a change of an entry's vector or its filter columns to the log the in-memory indexes
 * follow (migration 022; ann.ts, bit-mirror.ts), and returns it as a local change: the row the
 * entry now has (none after a delete).
 */
const logChange = (db: Db, pk: number, vector: Float32Array | null, meta: VectorMeta | null): LocalChange => {
  const seq = db.get<{ seq: number }>("INSERT INTO vector_changes (pk) VALUES (?) RETURNING seq", pk)?.seq ?? 0;
  return { seq, pk, vector, meta };
};

const asBlob = (vector: Float32Array): Buffer => Buffer.from(vector.buffer, vector.byteOffset, vector.byteLength);

function putVector(db: Db, pk: number, vector: Float32Array, meta: VectorMeta): void {
  db.run(`DELETE FROM ${TABLE} WHERE pk = ?`, BigInt(pk));
  db.run(`INSERT INTO ${EMBEDDINGS} (pk, embedding) VALUES (?, ?) ON CONFLICT (pk) DO UPDATE SET embedding = excluded.embedding`, pk, asBlob(vector));
  db.run(
    `INSERT INTO ${TABLE} (pk, bits, vis_key, owner_key, project_key, type, agent_id, confidence, expires_ms)
     VALUES (?, vec_quantize_binary(?), ?, ?, ?, ?, ?, ?, ?)`,
    BigInt(pk),
    vector,
    meta.visKey,
    meta.ownerKey,
    meta.projectKey,
    meta.type,
    meta.agentId,
    meta.confidence,
    BigInt(meta.expiresMs),
  );
}

/**
 * Replaces a row's metadata. vec0 refuses an UPDATE of metadata on a table whose vector column is
 * a bit vector (it re-validates the untouched vector as float32), so the row is re-inserted from
 * the stored float vector instead, which is returned (null when the entry has none).
 */
function updateVectorMeta(db: Db, pk: number, meta: VectorMeta): Float32Array | null {
  const stored = db.get<{ embedding: Buffer }>(`SELECT embedding FROM ${EMBEDDINGS} WHERE pk = ?`, pk);
  if (!stored) return null;
  const vector = new Float32Array(stored.embedding.buffer.slice(stored.embedding.byteOffset, stored.embedding.byteOffset + stored.embedding.byteLength));
  putVector(db, pk, vector, meta);
  return vector;
}

/**
 * The visibility rule in the index's terms: agents by the `vis_key`s they may see, roles that see
 * every project by `owner_key` (shared rows, plus their own private ones).
 */
function keysOf(db: Db, viewpoint: Viewpoint): { column: "vis_key" | "owner_key"; keys: string[] } {
  if (viewpoint.allProjects) return { column: "owner_key", keys: ["", viewpoint.agentId] };
  const projects = db.all<{ project_id: string }>("SELECT project_id FROM project_members WHERE agent_id = ?", viewpoint.agentId).map((row) => row.project_id);
  return { column: "vis_key", keys: ["g", `a:${viewpoint.agentId}`, ...projects.map((id) => `p:${id}`)] };
}

// Candidates taken from the bit scan per result wanted, and bounds on their number: vec0's cost
// grows with k, and the exact re-ranking needs enough candidates to find the true nearest.
const CANDIDATES_PER_RESULT = 4;
const MIN_CANDIDATES = 64;
const MAX_CANDIDATES = 400;
// The bit mirror's candidates are picked by int8 cosine, nearly the exact ranking: fewer do.
const MIRROR_CANDIDATES_PER_RESULT = 2;
const MIRROR_MIN_CANDIDATES = 16;

export class SqliteVectorIndex implements VectorIndex {
  // Read on every query, changed only by `ensure` (undefined: not read yet).
  private cachedModel: IndexModel | null | undefined;

  constructor(
    private readonly transact: <T>(work: (tx: Tx) => Promise<T>) => Promise<T>,
    /** The HNSW candidate generator; none for a read-only store. */
    private readonly ann: SqliteAnn | null = null,
    /** The bit scan in this process's memory; none for a read-only store. */
    private readonly mirror: BitMirror | null = null,
  ) {}

  private modelOf(db: Db): IndexModel | null {
    if (this.cachedModel === undefined) this.cachedModel = storedModel(db);
    return this.cachedModel;
  }

  async model(r: Reader): Promise<IndexModel | null> {
    return this.modelOf(connectionOf(r));
  }

  async ensure(model: string, dimensions: number): Promise<EnsureOutcome> {
    this.cachedModel = undefined;
    const outcome = await this.transact(async (tx): Promise<EnsureOutcome> => {
      const db = connectionOf(tx);
      const current = storedModel(db);
      if (current && current.model === model && current.dimensions === dimensions) return "unchanged";
      if (!Number.isInteger(dimensions) || dimensions < 8 || dimensions > 8192 || dimensions % 8 !== 0) {
        throw new InternalError("setup", `unsupported embedding dimensions ${dimensions}`);
      }
      const existed = metaValue(db, "vector_model") !== undefined;
      db.exec(`DROP TABLE IF EXISTS ${TABLE}`);
      db.exec(`DROP TABLE IF EXISTS ${EMBEDDINGS}`);
      db.exec(
        `CREATE VIRTUAL TABLE ${TABLE} USING vec0(
        pk integer primary key,
        bits bit[${dimensions}],
        vis_key text, owner_key text, project_key text, type text, agent_id text,
        confidence float, expires_ms integer)`,
      );
      db.exec(`CREATE TABLE ${EMBEDDINGS} (pk INTEGER PRIMARY KEY, embedding BLOB NOT NULL) STRICT`);
      setMeta(db, "vector_model", model);
      setMeta(db, "vector_dimensions", String(dimensions));
      setMeta(db, "vector_layout", VECTOR_LAYOUT);
      // A new generation: every HNSW index of the old vectors, in any process or file, is discarded.
      setMeta(db, "vector_generation", randomBytes(8).toString("hex"));
      db.run("DELETE FROM vector_changes");
      setMeta(db, "vector_changes_pruned", String(db.get<{ seq: number }>("SELECT seq FROM sqlite_sequence WHERE name = 'vector_changes'")?.seq ?? 0));
      db.run("UPDATE memory SET embedding_model = NULL WHERE embedding_model IS NOT NULL");
      return existed ? "reset" : "created";
    });
    this.cachedModel = { model, dimensions };
    return outcome;
  }

  async put(tx: Tx, pk: number, vector: Float32Array, meta: VectorMeta): Promise<void> {
    const db = connectionOf(tx);
    putVector(db, pk, vector, meta);
    this.afterChange(tx, [logChange(db, pk, vector, meta)]);
  }

  // Logged like a new vector: the bit mirror holds the filter columns.
  async updateMeta(tx: Tx, pk: number, meta: VectorMeta): Promise<void> {
    const db = connectionOf(tx);
    const vector = updateVectorMeta(db, pk, meta);
    if (vector) this.afterChange(tx, [logChange(db, pk, vector, meta)]);
  }

  async delete(tx: Tx, pk: number): Promise<void> {
    const db = connectionOf(tx);
    db.run(`DELETE FROM ${TABLE} WHERE pk = ?`, BigInt(pk));
    db.run(`DELETE FROM ${EMBEDDINGS} WHERE pk = ?`, pk);
    this.afterChange(tx, [logChange(db, pk, null, null)]);
  }

  private afterChange(tx: Tx, changes: LocalChange[]): void {
    const { ann, mirror } = this;
    if (ann || mirror) {
      tx.afterCommit(() => {
        ann?.changed();
        mirror?.committed(changes);
      });
    }
  }

  async get(r: Reader, pks: number[]): Promise<Map<number, Float32Array>> {
    const db = connectionOf(r);
    const vectors = new Map<number, Float32Array>();
    if (pks.length === 0) return vectors;
    if (!this.modelOf(db)) return vectors;
    const rows = db.all<{ pk: number; embedding: Buffer }>(
      `SELECT pk, embedding FROM ${EMBEDDINGS} WHERE pk IN (SELECT value FROM json_each(?))`,
      JSON.stringify(pks),
    );
    for (const row of rows) {
      const bytes = row.embedding;
      vectors.set(row.pk, new Float32Array(bytes.buffer.slice(bytes.byteOffset, bytes.byteOffset + bytes.byteLength)));
    }
    return vectors;
  }

  async renameAgent(tx: Tx, from: string, to: string): Promise<void> {
    const db = connectionOf(tx);
    if (!this.modelOf(db)) return;
    const rows = db.all<VectorMetaRow & { pk: number }>(
      `SELECT pk, vis_key, owner_key, project_key, type, agent_id, confidence, expires_ms FROM ${TABLE} WHERE agent_id = ?`,
      from,
    );
    const changes: LocalChange[] = [];
    for (const row of rows) {
      const mine = row.owner_key === from;
      const meta: VectorMeta = {
        visKey: mine ? `a:${to}` : row.vis_key,
        ownerKey: mine ? to : row.owner_key,
        projectKey: row.project_key,
        type: row.type,
        agentId: to,
        confidence: row.confidence,
        expiresMs: Number(row.expires_ms),
      };
      const vector = updateVectorMeta(db, row.pk, meta);
      if (vector) changes.push(logChange(db, row.pk, vector, meta));
    }
    if (changes.length > 0) this.afterChange(tx, changes);
  }

  /**
   * Every filter is applied inside the vec0 scan of the quantized vectors, or, on a large store,
   * to the HNSW index's candidates (ann.ts); either way the candidates are then ranked by exact
   * cosine distance. The HNSW is skipped inside a transaction (its writes are not in the index
   * yet) and when too few of its candidates pass the filters (a selective filter, which the scan
   * answers exactly).
   */
  async nearest(r: Reader, vector: Float32Array, k: number, filter: VectorFilter): Promise<Neighbour[]> {
    const db = connectionOf(r);
    if (!this.modelOf(db)) return [];
    const wanted = filter.excludePk === undefined ? k : k + 1;
    const ranked = (this.ann && !db.sqlite.inTransaction && this.fromAnn(db, this.ann, vector, wanted, filter)) || this.scan(db, vector, wanted, filter);
    const maxDistance = filter.maxDistance ?? Infinity;
    return ranked.filter((row) => row.pk !== filter.excludePk && row.distance <= maxDistance).slice(0, k);
  }

  /** Whether the HNSW index is built and in use (`status`), and a promise of its being ready (benchmarks). */
  get annStatus(): IndexStatus {
    return this.ann?.status ?? "off";
  }

  warm(): void {
    void this.mirrorReady().catch(() => undefined);
  }

  /** Whether the bit mirror is built and in use. */
  get mirrorStatus(): IndexStatus {
    return this.mirror?.status ?? "off";
  }

  annReady(): Promise<boolean> {
    return this.ann?.ready() ?? Promise.resolve(false);
  }

  /** Resolves once the bit mirror is built, partitioned if its size calls for it, and current (true), or cannot be now (false). */
  mirrorReady(): Promise<boolean> {
    return this.mirror?.settled() ?? Promise.resolve(false);
  }

  /** Stops the in-memory indexes: the HNSW index is saved, the mirror let go. */
  async closeIndexes(): Promise<void> {
    this.mirror?.close();
    await this.ann?.close();
  }

  private fromAnn(db: Db, ann: SqliteAnn, vector: Float32Array, wanted: number, filter: VectorFilter): Neighbour[] | null {
    const asked = Math.max(ANN_MIN_CANDIDATES, wanted * ANN_CANDIDATES_PER_RESULT);
    const found = ann.candidates(vector, asked);
    if (found === null || found.length === 0) return null;
    const { where, params } = filtersOf(visibleKeys(db, filter), filter, "v.");
    // The filters and the exact distances in one statement: the candidates that pass, ranked.
    const ranked = db.all<Neighbour>(
      `SELECT v.pk AS pk, vec_distance_cosine(e.embedding, ?) AS distance
         FROM json_each(?) AS j CROSS JOIN ${TABLE} AS v ON v.pk = j.value CROSS JOIN ${EMBEDDINGS} AS e ON e.pk = v.pk
        WHERE ${where.join(" AND ")} ORDER BY distance, pk`,
      vector,
      JSON.stringify(found),
      ...params,
    );
    return ranked.length < wanted ? null : ranked;
  }

  /**
   * The bit scan: in the mirror where it can answer (outside a transaction, whose own writes it
   * does not hold yet, and for every filter but a tag), else in vec0.
   */
  private scan(db: Db, vector: Float32Array, wanted: number, filter: VectorFilter): Neighbour[] {
    const visible = visibleKeys(db, filter);
    // A coarse query takes the int8 ranking's own few: each candidate's exact distance is a read of
    // the reader's pages, which every commit makes it read again.
    const asked = filter.coarse === true ? wanted : Math.min(MAX_CANDIDATES, Math.max(MIRROR_MIN_CANDIDATES, wanted * MIRROR_CANDIDATES_PER_RESULT));
    const mirrored = this.mirror && !db.sqlite.inTransaction && filter.tag === undefined ? this.mirror.candidates(vector, asked, mirrorFilter(visible, filter)) : null;
    if (mirrored) return mirrored.length === 0 ? [] : rerank(db, vector, mirrored);
    const candidates = Math.min(MAX_CANDIDATES, Math.max(MIN_CANDIDATES, wanted * CANDIDATES_PER_RESULT));
    const { where, params } = filtersOf(visible, filter, "");
    const coarse = db.all<{ pk: number }>(
      `SELECT pk FROM ${TABLE} WHERE bits MATCH vec_quantize_binary(?) AND k = ? AND ${where.join(" AND ")}`,
      vector,
      candidates,
      ...params,
    );
    return coarse.length === 0 ? [] : rerank(db, vector, coarse.map((row) => row.pk));
  }
}

// Candidates asked of the HNSW per result wanted: some fail the filters, and the exact re-ranking
// reorders the rest.
const ANN_CANDIDATES_PER_RESULT = 2;
const ANN_MIN_CANDIDATES = 64;

/** The visibility column the filter looks at, and the keys it allows there. */
const visibleKeys = (db: Db, filter: VectorFilter): { column: "vis_key" | "owner_key"; keys: string[] } =>
  "viewpoint" in filter.within ? keysOf(db, filter.within.viewpoint) : { column: "vis_key", keys: [filter.within.visKey] };

/** The filter in the bit mirror's terms (all but a tag, which the mirror does not hold). */
const mirrorFilter = ({ column, keys }: { column: "vis_key" | "owner_key"; keys: string[] }, filter: VectorFilter): MirrorFilter => ({
  column,
  keys,
  nowMs: filter.nowMs,
  ...(filter.projectKey === undefined ? {} : { projectKey: filter.projectKey }),
  ...(filter.types === undefined ? {} : { types: filter.types }),
  ...(filter.agentId === undefined ? {} : { agentId: filter.agentId }),
  ...(filter.confidenceMin === undefined ? {} : { confidenceMin: filter.confidenceMin }),
  ...(filter.coarse === true ? { coarse: true } : {}),
});

/** The query's filters on the vec0 table's metadata columns (`alias` names the table in a join). */
function filtersOf({ column, keys }: { column: "vis_key" | "owner_key"; keys: string[] }, filter: VectorFilter, alias: string): { where: string[]; params: unknown[] } {
  const where: string[] = [];
  const params: unknown[] = [];
  where.push(`${alias}${column} IN (${keys.map(() => "?").join(", ")})`);
  params.push(...keys);
  where.push(`${alias}expires_ms > ?`);
  params.push(BigInt(filter.nowMs));
  if (filter.projectKey !== undefined) {
    where.push(`${alias}project_key = ?`);
    params.push(filter.projectKey);
  }
  // Allowed types rather than excluded ones: vec0 applies `IN` inside the scan but would apply
  // `NOT IN` only afterwards.
  if (filter.types !== undefined) {
    where.push(`${alias}type IN (${filter.types.map(() => "?").join(", ")})`);
    params.push(...filter.types);
  }
  if (filter.agentId !== undefined) {
    where.push(`${alias}agent_id = ?`);
    params.push(filter.agentId);
  }
  if (filter.confidenceMin !== undefined) {
    where.push(`${alias}confidence >= ?`);
    params.push(filter.confidenceMin);
  }
  if (filter.tag !== undefined) {
    where.push(`${alias}pk IN (SELECT memory_pk FROM memory_tags WHERE tag = ?)`);
    params.push(filter.tag);
  }
  return { where, params };
}

/** Candidates ordered by exact cosine distance from the full vectors. */
function rerank(db: Db, vector: Float32Array, candidates: number[]): Neighbour[] {
  return db.all<Neighbour>(
    `SELECT pk, vec_distance_cosine(embedding, ?) AS distance FROM ${EMBEDDINGS}
     WHERE pk IN (SELECT value FROM json_each(?)) ORDER BY distance, pk`,
    vector,
    JSON.stringify(candidates),
  );
}
