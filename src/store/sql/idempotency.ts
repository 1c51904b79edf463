import type { IdempotencyReply, IdempotencyRow, IdempotencyStore } from "../idempotency.js";
import type { Reader, Tx } from "../store.js";
import type { SqlDb } from "./dialect.js";

// The key's row is its own lock. Of two transactions claiming one key (the same request on two
// servers), the second's insert waits on the first's uncommitted row (a unique index does that on
// PostgreSQL; SQLite runs one at a time), then does nothing once the first commits: the second
// learns the key is taken and rolls back its change.
export class SqlIdempotency implements IdempotencyStore {
  constructor(private readonly db: SqlDb) {}

  find(r: Reader, agentId: string, key: string): Promise<IdempotencyRow | undefined> {
    return this.db.get<IdempotencyRow>(r, "SELECT request_hash, status, body, headers, created_at FROM idempotency WHERE agent_id = ? AND key = ?", agentId, key);
  }

  async claim(tx: Tx, agentId: string, key: string, requestHash: string, reply: IdempotencyReply, at: string): Promise<boolean> {
    const inserted = await this.db.all(
      tx,
      `INSERT INTO idempotency (agent_id, key, request_hash, status, body, headers, created_at) VALUES (?, ?, ?, ?, ?, ?, ?)
       ON CONFLICT (agent_id, key) DO NOTHING RETURNING status`,
      agentId,
      key,
      requestHash,
      reply.status,
      reply.body,
      reply.headers,
      at,
    );
    return inserted.length === 1;
  }

  async update(tx: Tx, agentId: string, key: string, reply: IdempotencyReply): Promise<void> {
    await this.db.run(tx, "UPDATE idempotency SET status = ?, body = ?, headers = ? WHERE agent_id = ? AND key = ?", reply.status, reply.body, reply.headers, agentId, key);
  }

  prune(tx: Tx, before: string): Promise<number> {
    return this.db.run(tx, "DELETE FROM idempotency WHERE created_at < ?", before);
  }
}
