import type { HandoffRow, HandoffStore } from "../handoffs.js";
import type { Reader, Tx } from "../store.js";
import type { SqlDb } from "./dialect.js";

export class SqlHandoffs implements HandoffStore {
  constructor(private readonly db: SqlDb) {}

  async insert(tx: Tx, row: HandoffRow): Promise<void> {
    await this.db.run(
      tx,
      "INSERT INTO handoffs (id, agent_id, host, summary, in_progress, next_steps, memory_refs, created_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?)",
      row.id,
      row.agent_id,
      row.host,
      row.summary,
      row.in_progress,
      row.next_steps,
      row.memory_refs,
      row.created_at,
    );
  }

  last(r: Reader, agentId: string): Promise<HandoffRow | undefined> {
    return this.db.get<HandoffRow>(
      r,
      "SELECT id, agent_id, host, summary, in_progress, next_steps, memory_refs, created_at FROM handoffs WHERE agent_id = ? ORDER BY pk DESC LIMIT 1",
      agentId,
    );
  }

  latest(r: Reader, beforePk: number | null, limit: number): Promise<(HandoffRow & { pk: number })[]> {
    return this.db.all<HandoffRow & { pk: number }>(
      r,
      `SELECT h.pk, h.id, h.agent_id, h.host, h.summary, h.in_progress, h.next_steps, h.memory_refs, h.created_at
     FROM handoffs h JOIN agents a ON a.agent_id = h.agent_id AND a.deleted_at IS NULL
     WHERE h.pk IN (SELECT max(pk) FROM handoffs GROUP BY agent_id) AND h.pk < ?
     ORDER BY h.pk DESC LIMIT ?`,
      beforePk ?? Number.MAX_SAFE_INTEGER,
      limit,
    );
  }
}
