import type { Db } from "./db.js";

/**
 * The vector index: a sqlite-vec `vec0` table keyed by `memory.pk`. Its metadata columns carry
 * what every query filters on, so the KNN scan applies visibility and filters itself and `k`
 * counts only rows the caller may see:
 * - `vis_key`: `g` (global), `p:<project>` (project-scoped) or `a:<author>` (private to the author);
 * - `owner_key`: the author for private entries, '' otherwise (for callers who see every project);
 * - `project_key`: the project or '' for global; `type`; `agent_id`; `confidence`;
 * - `expires_ms`: expiry in epoch ms (NO_EXPIRY when none), so expired rows drop out at once.
 * Soft-deleted entries have no row here.
 */
const TABLE = "memory_vectors";
export const NO_EXPIRY = 8_640_000_000_000_000;

export interface VectorMeta {
  visKey: string;
  ownerKey: string;
  projectKey: string;
  type: string;
  agentId: string;
  confidence: number;
  expiresMs: number;
}

/** Exactly one of `visKeys` (ordinary agents) and `ownerKeys` (roles that see every project). */
export interface VectorFilter {
  visKeys?: string[];
  ownerKeys?: string[];
  projectKey?: string;
  /** Allowed types (vec0 applies `IN` inside the scan but would apply `NOT IN` only afterwards). */
  types?: string[];
  agentId?: string;
  confidenceMin?: number;
  nowMs: number;
  maxDistance?: number;
  tag?: string;
  excludePk?: number;
}

export interface Neighbour {
  pk: number;
  distance: number;
}

export const visKeyFor = (scope: string, project: string | null, agentId: string): string =>
  scope === "agent" ? `a:${agentId}` : project === null ? "g" : `p:${project}`;
export const ownerKeyFor = (scope: string, agentId: string): string => (scope === "agent" ? agentId : "");

const metaValue = (db: Db, key: string): string | undefined =>
  db.get<{ value: string }>("SELECT value FROM meta WHERE key = ?", key)?.value;

export function vectorIndexModel(db: Db): { model: string; dimensions: number } | null {
  const model = metaValue(db, "vector_model");
  const dimensions = Number(metaValue(db, "vector_dimensions"));
  const exists = db.get("SELECT 1 FROM sqlite_master WHERE name = ?", TABLE);
  return model && exists && dimensions > 0 ? { model, dimensions } : null;
}

/**
 * Makes the index match the model. A different model (or dimension) empties it and marks every
 * entry unembedded, so the backfill job re-embeds everything with the new model.
 * Returns what it did.
 */
export function ensureVectorIndex(db: Db, model: string, dimensions: number): "unchanged" | "created" | "reset" {
  const current = vectorIndexModel(db);
  if (current && current.model === model && current.dimensions === dimensions) return "unchanged";
  if (!Number.isInteger(dimensions) || dimensions < 1 || dimensions > 8192) throw new Error(`bad dimensions ${dimensions}`);
  db.write(() => {
    db.sqlite.exec(`DROP TABLE IF EXISTS ${TABLE}`);
    db.sqlite.exec(
      `CREATE VIRTUAL TABLE ${TABLE} USING vec0(
        pk integer primary key,
        embedding float[${dimensions}] distance_metric=cosine,
        vis_key text, owner_key text, project_key text, type text, agent_id text,
        confidence float, expires_ms integer)`,
    );
    db.run("INSERT INTO meta (key, value) VALUES ('vector_model', ?) ON CONFLICT (key) DO UPDATE SET value = excluded.value", model);
    db.run(
      "INSERT INTO meta (key, value) VALUES ('vector_dimensions', ?) ON CONFLICT (key) DO UPDATE SET value = excluded.value",
      String(dimensions),
    );
    db.run("UPDATE memory SET embedding_model = NULL WHERE embedding_model IS NOT NULL");
  });
  return current ? "reset" : "created";
}

export function putVector(db: Db, pk: number, vector: Float32Array, meta: VectorMeta): void {
  db.run(`DELETE FROM ${TABLE} WHERE pk = ?`, BigInt(pk));
  db.run(
    `INSERT INTO ${TABLE} (pk, embedding, vis_key, owner_key, project_key, type, agent_id, confidence, expires_ms)
     VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)`,
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

export function updateVectorMeta(db: Db, pk: number, meta: VectorMeta): void {
  db.run(
    `UPDATE ${TABLE} SET vis_key = ?, owner_key = ?, project_key = ?, type = ?, agent_id = ?, confidence = ?, expires_ms = ?
     WHERE pk = ?`,
    meta.visKey,
    meta.ownerKey,
    meta.projectKey,
    meta.type,
    meta.agentId,
    meta.confidence,
    BigInt(meta.expiresMs),
    BigInt(pk),
  );
}

export const deleteVector = (db: Db, pk: number): void => {
  db.run(`DELETE FROM ${TABLE} WHERE pk = ?`, BigInt(pk));
};

export function getVectors(db: Db, pks: number[]): Map<number, Float32Array> {
  const vectors = new Map<number, Float32Array>();
  if (pks.length === 0) return vectors;
  const rows = db.all<{ pk: number; embedding: Buffer }>(
    `SELECT pk, embedding FROM ${TABLE} WHERE pk IN (SELECT value FROM json_each(?))`,
    JSON.stringify(pks),
  );
  for (const row of rows) {
    const bytes = row.embedding;
    vectors.set(row.pk, new Float32Array(bytes.buffer.slice(bytes.byteOffset, bytes.byteOffset + bytes.byteLength)));
  }
  return vectors;
}

export function renameVectorAgent(db: Db, from: string, to: string): void {
  if (!vectorIndexModel(db)) return;
  db.run(`UPDATE ${TABLE} SET agent_id = ? WHERE agent_id = ?`, to, from);
  db.run(`UPDATE ${TABLE} SET vis_key = ? WHERE vis_key = ?`, `a:${to}`, `a:${from}`);
  db.run(`UPDATE ${TABLE} SET owner_key = ? WHERE owner_key = ?`, to, from);
}

/** The `k` nearest visible rows to `vector`, every filter applied inside the vec0 scan. */
export function nearest(db: Db, vector: Float32Array, k: number, filter: VectorFilter): Neighbour[] {
  if (!vectorIndexModel(db)) return [];
  const where: string[] = ["embedding MATCH ?", "k = ?"];
  const params: unknown[] = [vector, k];
  const [column, keys] = filter.ownerKeys ? ["owner_key", filter.ownerKeys] : ["vis_key", filter.visKeys ?? []];
  if (keys.length === 0) return [];
  where.push(`${column} IN (${keys.map(() => "?").join(", ")})`);
  params.push(...keys);
  where.push("expires_ms > ?");
  params.push(BigInt(filter.nowMs));
  if (filter.projectKey !== undefined) {
    where.push("project_key = ?");
    params.push(filter.projectKey);
  }
  if (filter.types !== undefined) {
    where.push(`type IN (${filter.types.map(() => "?").join(", ")})`);
    params.push(...filter.types);
  }
  if (filter.agentId !== undefined) {
    where.push("agent_id = ?");
    params.push(filter.agentId);
  }
  if (filter.confidenceMin !== undefined) {
    where.push("confidence >= ?");
    params.push(filter.confidenceMin);
  }
  if (filter.maxDistance !== undefined) {
    where.push("distance <= ?");
    params.push(filter.maxDistance);
  }
  if (filter.tag !== undefined) {
    where.push("pk IN (SELECT memory_pk FROM memory_tags WHERE tag = ?)");
    params.push(filter.tag);
  }
  // `pk != ?` would be applied after the scan (shrinking the result), so one extra row is fetched
  // and the excluded one dropped here instead.
  if (filter.excludePk !== undefined) params[1] = k + 1;
  const rows = db.all<Neighbour>(`SELECT pk, distance FROM ${TABLE} WHERE ${where.join(" AND ")} ORDER BY distance`, ...params);
  return filter.excludePk === undefined ? rows : rows.filter((row) => row.pk !== filter.excludePk).slice(0, k);
}
