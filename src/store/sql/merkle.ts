import { REPLICABLE_TYPES, type LeafRow, type MerkleStore } from "../merkle.js";
import type { Reader, Tx } from "../store.js";
import type { SqlDb, SqlDialect } from "./dialect.js";
import type { SqlFragment } from "./visibility.js";

/**
 * The leaf of an entry as SQL over the row being updated: the SHA-256 (lower-case hex) of
 *
 *     id|origin|version|deleted|content_key|project
 *
 * `origin` is the instance id the entry was written on (`localOrigin` where the row names none),
 * `version` the decimal integer, `deleted` `1` for a tombstone and `0` otherwise, `content_key`
 * the entry's content key (itself the hex SHA-256 of its normalised content; empty for a
 * tombstone, whose content a peer's feed does not carry, so a copy of it agrees), `project` the
 * project id or the empty string for a global entry. The bucket is the first two hex digits of
 * SHA-256(id). docs/feeds.md repeats this for peers; the tests recompute it from the entries.
 */
export function merkleStamp(dialect: SqlDialect, localOrigin: string): SqlFragment {
  const leaf = [
    "id",
    "coalesce(origin, CAST(? AS TEXT))",
    "CAST(version AS TEXT)",
    "CASE WHEN deleted_at IS NULL THEN '0' ELSE '1' END",
    "CASE WHEN deleted_at IS NULL THEN content_key ELSE '' END",
    "coalesce(project, '')",
  ].join(" || '|' || ");
  return { sql: `merkle_leaf = ${dialect.sha256Hex(leaf)}, merkle_bucket = substr(${dialect.sha256Hex("id")}, 1, 2)`, params: [localOrigin] };
}

// Written as migration 018's partial index says it, so that SQLite sees the index applies.
const REPLICABLE = `m.scope = 'project' AND m.type IN (${REPLICABLE_TYPES.map((type) => `'${type}'`).join(", ")})`;

/** A copy an owner suppressed here is not passed on (CONTRACT §16). */
export const NOT_SUPPRESSED = "NOT EXISTS (SELECT 1 FROM mesh_suppressions s WHERE s.memory_id = m.id)";

function inProject(project: string | null): SqlFragment {
  return project === null ? { sql: "m.project IS NULL", params: [] } : { sql: "m.project = ?", params: [project] };
}

export class SqlMerkle implements MerkleStore {
  constructor(private readonly db: SqlDb) {}

  async latestChange(r: Reader): Promise<number> {
    const row = await this.db.get<{ seq: number | null }>(r, "SELECT max(change_seq) AS seq FROM memory");
    return row?.seq ?? 0;
  }

  async bucketsChangedSince(r: Reader, afterSeq: number, limit: number): Promise<string[] | null> {
    const rows = await this.db.all<{ bucket: string }>(
      r,
      "SELECT DISTINCT merkle_bucket AS bucket FROM memory WHERE change_seq > ? AND merkle_bucket IS NOT NULL LIMIT ?",
      afterSeq,
      limit + 1,
    );
    return rows.length > limit ? null : rows.map((row) => row.bucket);
  }

  leaves(r: Reader, project: string | null, buckets: readonly string[] | null): Promise<LeafRow[]> {
    const where = inProject(project);
    const inBuckets = buckets === null ? null : this.db.dialect.inList("m.merkle_bucket", buckets);
    return this.db.all<LeafRow>(
      r,
      `SELECT m.id, m.merkle_bucket AS bucket, m.merkle_leaf AS leaf
         FROM memory m WHERE ${REPLICABLE} AND ${where.sql} AND ${NOT_SUPPRESSED}${inBuckets === null ? "" : ` AND ${inBuckets.sql}`}`,
      ...where.params,
      ...(inBuckets?.params ?? []),
    );
  }

  stampUnstamped(tx: Tx, localOrigin: string, limit: number): Promise<number> {
    const stamp = merkleStamp(this.db.dialect, localOrigin);
    // Rows another server is stamping (several may start at once on one database) are passed over.
    // The pick is a MATERIALIZED step run once (as the UPDATE's subquery it may be run again per row, past `limit`).
    return this.db.run(
      tx,
      `WITH picked AS MATERIALIZED (
          SELECT u.pk FROM memory u WHERE u.merkle_leaf IS NULL ORDER BY u.pk LIMIT ?${this.db.dialect.skipLocked(tx, "u")})
       UPDATE memory SET ${stamp.sql}
        WHERE pk IN (SELECT p.pk FROM picked p)`,
      limit,
      ...stamp.params,
    );
  }
}
