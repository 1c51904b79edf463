import type { IdempotencyRow, IdempotencyStore } from "../idempotency.js";
import type { Reader, Tx } from "../store.js";
import { connectionOf } from "./transactions.js";

// Races between servers are settled by the row itself: a second reservation of a key waits for the
// first transaction's insert and then does nothing; a second take-over waits for the first update
// and then no longer finds the row stale.
export class PgIdempotency implements IdempotencyStore {
  async find(r: Reader, agentId: string, key: string): Promise<IdempotencyRow | undefined> {
    return connectionOf(r).get<IdempotencyRow>(
      "SELECT request_hash, status, body, headers, created_at FROM idempotency WHERE agent_id = ? AND key = ?",
      agentId,
      key,
    );
  }

  async reserve(tx: Tx, agentId: string, key: string, requestHash: string, at: string): Promise<boolean> {
    const result = await connectionOf(tx).run(
      `INSERT INTO idempotency (agent_id, key, request_hash, status, body, headers, created_at) VALUES (?, ?, ?, 0, NULL, '{}', ?)
       ON CONFLICT (agent_id, key) DO NOTHING`,
      agentId,
      key,
      requestHash,
      at,
    );
    return result.changes === 1;
  }

  async takeOver(tx: Tx, agentId: string, key: string, staleBefore: string, at: string): Promise<boolean> {
    const result = await connectionOf(tx).run(
      "UPDATE idempotency SET created_at = ? WHERE agent_id = ? AND key = ? AND status = 0 AND created_at < ?",
      at,
      agentId,
      key,
      staleBefore,
    );
    return result.changes === 1;
  }

  async complete(tx: Tx, agentId: string, key: string, response: Omit<IdempotencyRow, "request_hash" | "created_at">): Promise<void> {
    await connectionOf(tx).run(
      "UPDATE idempotency SET status = ?, body = ?, headers = ? WHERE agent_id = ? AND key = ?",
      response.status,
      response.body,
      response.headers,
      agentId,
      key,
    );
  }

  async release(tx: Tx, agentId: string, key: string): Promise<void> {
    await connectionOf(tx).run("DELETE FROM idempotency WHERE agent_id = ? AND key = ? AND status = 0", agentId, key);
  }

  async prune(tx: Tx, before: string): Promise<number> {
    return (await connectionOf(tx).run("DELETE FROM idempotency WHERE created_at < ?", before)).changes;
  }
}
