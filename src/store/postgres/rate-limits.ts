import type { SharedRateLimits } from "../store.js";
import type { PgDb } from "./connection.js";

// The bucket refilled to now, capped at its capacity: ?1 capacity, ?2 now (ms), ?3 tokens per ms.
const REFILLED = "LEAST(?::float8, b.tokens + (?::float8 - b.refilled_ms) * ?::float8)";

/** Token buckets in a table: one statement per request refills, decides and takes, under the row's lock. */
export class PgRateLimits implements SharedRateLimits {
  constructor(private readonly db: PgDb) {}

  async take(agentId: string, capacity: number, nowMs: number): Promise<{ allowed: true } | { allowed: false; retryAfterSeconds: number }> {
    const perMs = capacity / 60_000;
    const refill = [capacity, nowMs, perMs];
    const row = await this.db.get<{ tokens: number; granted: boolean }>(
      `INSERT INTO rate_buckets AS b (agent_id, tokens, refilled_ms, granted) VALUES (?, ?, ?, true)
       ON CONFLICT (agent_id) DO UPDATE SET
         tokens = CASE WHEN ${REFILLED} >= 1 THEN ${REFILLED} - 1 ELSE ${REFILLED} END,
         granted = ${REFILLED} >= 1,
         refilled_ms = excluded.refilled_ms
       RETURNING tokens, granted`,
      agentId,
      capacity - 1,
      nowMs,
      ...refill,
      ...refill,
      ...refill,
      ...refill,
    );
    if (!row || row.granted) return { allowed: true };
    return { allowed: false, retryAfterSeconds: Math.max(1, Math.ceil((1 - row.tokens) / perMs / 1000)) };
  }
}
