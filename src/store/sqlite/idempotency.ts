import type { IdempotencyStore, IdempotencyRow } from "../idempotency.js";
import type { Reader, Tx } from "../store.js";
import { connectionOf } from "./transactions.js";

export class SqliteIdempotency implements IdempotencyStore {
  async find(r: Reader, agentId: string, key: string): Promise<IdempotencyRow | undefined> {
    const db = connectionOf(r);
    return db.get<IdempotencyRow>("SELECT request_hash, status, body, headers FROM idempotency WHERE agent_id = ? AND key = ?", agentId, key);
  }

  async save(tx: Tx, agentId: string, key: string, response: IdempotencyRow, at: string): Promise<void> {
    const db = connectionOf(tx);
    db.run(
      `INSERT INTO idempotency (agent_id, key, request_hash, status, body, headers, created_at) VALUES (?, ?, ?, ?, ?, ?, ?)
     ON CONFLICT (agent_id, key) DO NOTHING`,
      agentId,
      key,
      response.request_hash,
      response.status,
      response.body,
      response.headers,
      at,
    );
  }

  async prune(tx: Tx, before: string): Promise<number> {
    const db = connectionOf(tx);
    return db.run("DELETE FROM idempotency WHERE created_at < ?", before).changes;
  }
}
