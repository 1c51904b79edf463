import type { Db } from "./db.js";
import { visibleEvent, type Viewer } from "./visibility.js";

export interface EventRow {
  seq: number;
  id: string;
  type: string;
  agent_id: string;
  project: string | null;
  private_to: string | null;
  payload: string;
  created_at: string;
  /** 1 when only the agents in `event_audience` may see it. */
  restricted: number;
}

export type NewEventRow = Omit<EventRow, "seq" | "restricted">;

/** Stores the event; with an `audience`, only those agents may ever see it. */
export function insertEvent(db: Db, row: NewEventRow, audience?: string[]): number {
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

export interface EventFilters {
  /** Exact type, or a family such as `memory.*`. */
  type?: string | undefined;
  agent?: string | undefined;
}

/**
 * Visible events after `afterSeq` (or created after `since`), in commit order; with `beforeSeq`
 * newest first instead, from just below it down to the start.
 */
export function listEvents(
  db: Db,
  viewer: Viewer,
  start: { afterSeq: number } | { since: string },
  filters: EventFilters,
  limit: number,
  beforeSeq?: number,
): EventRow[] {
  const visible = visibleEvent("e", viewer);
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

export const maxEventSeq = (db: Db): number => db.get<{ seq: number | null }>("SELECT max(seq) AS seq FROM events")?.seq ?? 0;

const PRUNED_THROUGH = "events_pruned_through";

/** The highest seq retention has removed: a reader asking to resume before it has missed events. */
export const prunedThrough = (db: Db): number =>
  Number(db.get<{ value: string }>("SELECT value FROM meta WHERE key = ?", PRUNED_THROUGH)?.value ?? 0);

/**
 * Deletes up to `batch` of the oldest events created before `before` and records how far the log
 * has been cut; returns how many went. Call it in a loop, one transaction per batch, so a large
 * backlog never holds the write lock for long.
 */
export function pruneEventBatch(db: Db, before: string, batch: number): number {
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
