import type { Db } from "./db.js";

export interface HandoffRow {
  id: string;
  agent_id: string;
  host: string | null;
  summary: string;
  in_progress: string;
  next_steps: string;
  memory_refs: string;
  created_at: string;
}

export function insertHandoff(db: Db, row: HandoffRow): void {
  db.run(
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

export const lastHandoff = (db: Db, agentId: string): HandoffRow | undefined =>
  db.get<HandoffRow>(
    "SELECT id, agent_id, host, summary, in_progress, next_steps, memory_refs, created_at FROM handoffs WHERE agent_id = ? ORDER BY pk DESC LIMIT 1",
    agentId,
  );

/** The newest handoff of each agent not deleted, newest first; `beforePk` continues a previous page. */
export const latestHandoffs = (db: Db, beforePk: number | null, limit: number): (HandoffRow & { pk: number })[] =>
  db.all<HandoffRow & { pk: number }>(
    `SELECT h.pk, h.id, h.agent_id, h.host, h.summary, h.in_progress, h.next_steps, h.memory_refs, h.created_at
     FROM handoffs h JOIN agents a ON a.agent_id = h.agent_id AND a.deleted_at IS NULL
     WHERE h.pk IN (SELECT max(pk) FROM handoffs GROUP BY agent_id) AND h.pk < ?
     ORDER BY h.pk DESC LIMIT ?`,
    beforePk ?? Number.MAX_SAFE_INTEGER,
    limit,
  );

export const memorySeenAt = (db: Db, agentId: string): string | null =>
  db.get<{ memory_seen_at: string | null }>("SELECT memory_seen_at FROM agents WHERE agent_id = ?", agentId)?.memory_seen_at ?? null;

export const setMemorySeenAt = (db: Db, agentId: string, at: string): void => {
  db.run("UPDATE agents SET memory_seen_at = ? WHERE agent_id = ?", at, agentId);
};
