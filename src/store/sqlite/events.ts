import type { EventFilters, EventRow, EventStore, NewEventRow } from "../events.js";
import type { Reader, Tx } from "../store.js";
import type { Viewpoint } from "../visibility.js";
import { connectionOf } from "./transactions.js";
import { eventListQuery } from "../sql/events.js";

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
    const query = eventListQuery(viewpoint, start, filters, limit, beforeSeq);
    return connectionOf(r).all<EventRow>(query.sql, ...query.params);
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
