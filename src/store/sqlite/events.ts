import type { EventFilters, EventRow, EventStore, NewEventRow } from "../events.js";
import type { Reader, Tx } from "../store.js";
import type { Viewpoint } from "../visibility.js";
import { connectionOf } from "./transactions.js";
import { visibleEvent } from "../sql/visibility.js";

const PRUNED_THROUGH = "events_pruned_through";

export class SqliteEvents implements EventStore {
  async insert(tx: Tx, row: NewEventRow, audience?: string[]): Promise<number> {
    const db = connectionOf(tx);
    const result = db.run(
      "INSERT INTO events (id, type, agent_id, project, private_to, payload, created_at, restricted) VALUES (?, ?, ?, ?, ?, ?, ?, ?)",
      row.id,
      row.type,
      row.agent_id,
      row.project,
      row.private_to,
      row.payload,
      row.created_at,
      audience ? 1 : 0,
    );
    const seq = Number(result.lastInsertRowid);
    for (const agentId of new Set(audience ?? [])) db.run("INSERT INTO event_audience (event_seq, agent_id) VALUES (?, ?)", seq, agentId);
    return seq;
  }

  async list(
    r: Reader,
    viewpoint: Viewpoint,
    start: { afterSeq: number } | { since: string },
    filters: EventFilters,
    limit: number,
    beforeSeq?: number,
  ): Promise<EventRow[]> {
    const db = connectionOf(r);
    const visible = visibleEvent("e", viewpoint);
    const where = [visible.sql];
    const params: unknown[] = [...visible.params];
    if ("afterSeq" in start) {
      where.push("e.seq > ?");
      params.push(start.afterSeq);
    } else {
      where.push("e.created_at > ?");
      params.push(start.since);
    }
    if (filters.type?.endsWith(".*")) {
      where.push("e.type >= ? AND e.type < ?");
      const family = filters.type.slice(0, -1);
      params.push(family, `${family}\uffff`);
    } else if (filters.type !== undefined) {
      where.push("e.type = ?");
      params.push(filters.type);
    }
    if (filters.agent !== undefined) {
      where.push("e.agent_id = ?");
      params.push(filters.agent);
    }
    if (beforeSeq !== undefined) {
      where.push("e.seq < ?");
      params.push(beforeSeq);
    }
    const order = beforeSeq === undefined ? "e.seq" : "e.seq DESC";
    return db.all<EventRow>(`SELECT e.* FROM events e WHERE ${where.join(" AND ")} ORDER BY ${order} LIMIT ?`, ...params, limit);
  }

  async since(r: Reader, afterSeq: number, limit: number): Promise<(EventRow & { audience: string[] | null })[]> {
    const rows = connectionOf(r).all<EventRow & { audience: string | null }>(
      `SELECT e.*, CASE WHEN e.restricted = 1
         THEN (SELECT json_group_array(agent_id) FROM event_audience WHERE event_seq = e.seq) END AS audience
       FROM events e WHERE e.seq > ? ORDER BY e.seq LIMIT ?`,
      afterSeq,
      limit,
    );
    return rows.map((row) => ({ ...row, audience: row.audience === null ? null : (JSON.parse(row.audience) as string[]) }));
  }

  async maxSeq(r: Reader): Promise<number> {
    const db = connectionOf(r);
    return db.get<{ seq: number | null }>("SELECT max(seq) AS seq FROM events")?.seq ?? 0;
  }

  async prunedThrough(r: Reader): Promise<number> {
    const db = connectionOf(r);
    return Number(db.get<{ value: string }>("SELECT value FROM meta WHERE key = ?", PRUNED_THROUGH)?.value ?? 0);
  }

  // Batches keep a large backlog from holding the write lock for long.
  async pruneBatch(tx: Tx, before: string, batch: number): Promise<number> {
    const db = connectionOf(tx);
    const last = db.get<{ seq: number | null }>(
      "SELECT max(seq) AS seq FROM (SELECT seq FROM events WHERE created_at < ? ORDER BY seq LIMIT ?)",
      before,
      batch,
    )?.seq;
    if (last === null || last === undefined) return 0;
    const removed = db.run("DELETE FROM events WHERE seq <= ? AND created_at < ?", last, before).changes;
    db.run(
      "INSERT INTO meta (key, value) VALUES (?, ?) ON CONFLICT (key) DO UPDATE SET value = CAST(max(CAST(value AS INTEGER), CAST(excluded.value AS INTEGER)) AS TEXT)",
      PRUNED_THROUGH,
      String(last),
    );
    return removed;
  }
}
