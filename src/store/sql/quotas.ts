import type { QuotaCharge, QuotaStore } from "../quotas.js";
import type { Reader, Tx } from "../store.js";
import type { SqlDb } from "./dialect.js";

// The bucket refilled to now, capped at its capacity. Parameters, in order: now (ms), refill per
// ms, capacity, capacity, now, refill per ms. CASE rather than LEAST or min(): SQLite has only the
// one, PostgreSQL only the other.
const REFILLED =
  "CASE WHEN b.tokens + (CAST(? AS DOUBLE PRECISION) - b.refilled_ms) * CAST(? AS DOUBLE PRECISION) > CAST(? AS DOUBLE PRECISION) THEN CAST(? AS DOUBLE PRECISION) " +
  "ELSE b.tokens + (CAST(? AS DOUBLE PRECISION) - b.refilled_ms) * CAST(? AS DOUBLE PRECISION) END";

/** Token buckets and counts in the shared SQL: each charge is one upsert, under the row's lock where transactions overlap. */
export class SqlQuotas implements QuotaStore {
  constructor(private readonly db: SqlDb) {}

  async charge(tx: Tx, agentId: string, quota: string, cost: number, capacity: number, windowMs: number, nowMs: number): Promise<QuotaCharge> {
    const perMs = capacity / windowMs;
    const refilled = [nowMs, perMs, capacity, capacity, nowMs, perMs];
    const row = await this.db.get<{ tokens: number; granted: number }>(
      tx,
      `INSERT INTO quota_buckets AS b (agent_id, quota, tokens, refilled_ms, granted) VALUES (?, ?, ?, ?, 1)
       ON CONFLICT (agent_id, quota) DO UPDATE SET
         tokens = CASE WHEN ${REFILLED} >= ? THEN ${REFILLED} - ? ELSE ${REFILLED} END,
         granted = CASE WHEN ${REFILLED} >= ? THEN 1 ELSE 0 END,
         refilled_ms = excluded.refilled_ms
       RETURNING tokens, granted`,
      agentId,
      quota,
      capacity - cost,
      nowMs,
      ...refilled,
      cost,
      ...refilled,
      cost,
      ...refilled,
      ...refilled,
      cost,
    );
    if (!row || Number(row.granted) === 1) return { granted: true };
    return { granted: false, retryAfterSeconds: Math.max(1, Math.ceil((cost - Number(row.tokens)) / perMs / 1000)) };
  }

  prune(tx: Tx, beforeMs: number): Promise<number> {
    return this.db.run(tx, "DELETE FROM quota_buckets WHERE refilled_ms < ?", beforeMs);
  }

  async liveEntries(r: Reader, project: string | null): Promise<number> {
    const row =
      project === null
        ? await this.db.get<{ count: number }>(r, "SELECT count(*) AS count FROM memory WHERE project IS NULL AND deleted_at IS NULL")
        : await this.db.get<{ count: number }>(r, "SELECT count(*) AS count FROM memory WHERE project = ? AND deleted_at IS NULL", project);
    return Number(row?.count ?? 0);
  }

  async unembeddedBy(r: Reader, agentId: string): Promise<number> {
    const row = await this.db.get<{ count: number }>(r, "SELECT count(*) AS count FROM memory WHERE agent_id = ? AND embedding_model IS NULL AND deleted_at IS NULL", agentId);
    return Number(row?.count ?? 0);
  }
}
