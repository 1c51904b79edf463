import type { AnnouncedChange, EventFilters, EventRow, EventStore, NewEventRow } from "../events.js";
import type { Reader, Tx } from "../store.js";
import type { Viewpoint } from "../visibility.js";
import type { SqlDb } from "./dialect.js";
import { merkleStamp } from "./merkle.js";
import { visibleEvent, type SqlFragment } from "./visibility.js";

/** The events a viewpoint may see after a point (or before a seq, newest first): one statement for both backends. */
function eventListQuery(
  viewpoint: Viewpoint,
  start: { afterSeq: number } | { since: string },
  filters: EventFilters,
  limit: number,
  beforeSeq?: number,
): { sql: string; params: unknown[] } {
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
  return { sql: `SELECT e.* FROM events e WHERE ${where.join(" AND ")} ORDER BY ${order} LIMIT ?`, params: [...params, limit] };
}

/**
 * What a backend does around the insert of an event row, so that readers never pass a seq whose
 * transaction has not committed. `insert` runs the one INSERT of the row, reading it from `from`
 * (a FROM clause; none by default), and resolves to the seq drawn.
 */
export type EventAppend = (tx: Tx, insert: (from?: SqlFragment) => Promise<number>) => Promise<number>;

const PRUNED_THROUGH = "events_pruned_through";

export class SqlEvents implements EventStore {
  /** `append`: the backend's part of an event's insert (sqlite/events.ts, postgres/events.ts). */
  constructor(
    private readonly db: SqlDb,
    private readonly append: EventAppend,
  ) {}

  async insert(tx: Tx, row: NewEventRow, audience?: string[], announces?: AnnouncedChange): Promise<number> {
    // What follows the row, each a statement of its own or, where the dialect allows writes in a
    // WITH (PostgreSQL), a part of the insert's: the first event of a transaction holds the
    // events' lock from its insert to its commit, and every round trip in between lengthens that.
    // The entry takes the event's seq (`seq`: an expression, or `?` for a parameter), and so does
    // each agent of a restricted event's audience.
    const stamp = announces && { ...merkleStamp(this.db.dialect, announces.localOrigin), id: announces.memoryId };
    const agents = [...new Set(audience ?? [])];
    const listed = agents.length > 0 ? this.db.dialect.listRows(agents, "a") : undefined;
    const follows: { sql: (seq: string) => string; params: unknown[] }[] = [];
    if (stamp) follows.push({ sql: (seq) => `UPDATE memory SET change_seq = ${seq}, ${stamp.sql} WHERE id = ?`, params: [...stamp.params, stamp.id] });
    if (listed) follows.push({ sql: (seq) => `INSERT INTO event_audience (event_seq, agent_id) SELECT CAST(${seq} AS BIGINT), a.value FROM ${listed.sql}`, params: listed.params });
    const together = this.db.dialect.writesInWith;
    const seq = await this.append(tx, async (from = { sql: "", params: [] }) => {
      const insert = `INSERT INTO events (id, type, agent_id, project, private_to, payload, created_at, restricted)
         SELECT ?, ?, ?, ?, ?, ?, ?, CAST(? AS INTEGER) ${from.sql} RETURNING seq`;
      const params = [row.id, row.type, row.agent_id, row.project, row.private_to, row.payload, row.created_at, audience ? 1 : 0, ...from.params];
      const [inserted] =
        together && follows.length > 0
          ? await this.db.all<{ seq: unknown }>(
              tx,
              `WITH ev AS (${insert})${follows.map((follow, index) => `, f${index} AS (${follow.sql("(SELECT seq FROM ev)")})`).join("")} SELECT seq FROM ev`,
              ...params,
              ...follows.flatMap((follow) => follow.params),
            )
          : await this.db.all<{ seq: unknown }>(tx, insert, ...params);
      return Number(inserted?.seq);
    });
    if (!together) for (const follow of follows) await this.db.run(tx, follow.sql("?"), seq, ...follow.params);
    return seq;
  }

  list(
    r: Reader,
    viewpoint: Viewpoint,
    start: { afterSeq: number } | { since: string },
    filters: EventFilters,
    limit: number,
    beforeSeq?: number,
  ): Promise<EventRow[]> {
    const query = eventListQuery(viewpoint, start, filters, limit, beforeSeq);
    return this.db.all<EventRow>(r, query.sql, ...query.params);
  }

  // The audience in the order of SQLite's primary key (event_seq, agent_id).
  async since(r: Reader, afterSeq: number, limit: number): Promise<(EventRow & { audience: string[] | null })[]> {
    const rows = await this.db.all<EventRow & { audience: string | null }>(
      r,
      `SELECT e.*, CASE WHEN e.restricted = 1
         THEN (SELECT ${this.db.dialect.jsonArray("a.agent_id", "a.agent_id")} FROM event_audience a WHERE a.event_seq = e.seq) END AS audience
       FROM events e WHERE e.seq > ? ORDER BY e.seq LIMIT ?`,
      afterSeq,
      limit,
    );
    return rows.map((row) => ({ ...row, audience: row.audience === null ? null : (JSON.parse(row.audience) as string[]) }));
  }

  async maxSeq(r: Reader): Promise<number> {
    return (await this.db.get<{ seq: number | null }>(r, "SELECT max(seq) AS seq FROM events"))?.seq ?? 0;
  }

  async prunedThrough(r: Reader): Promise<number> {
    return Number((await this.db.get<{ value: string }>(r, "SELECT value FROM meta WHERE key = ?", PRUNED_THROUGH))?.value ?? 0);
  }

  // Batches keep a large backlog from holding the write lock (SQLite) or many row locks (PostgreSQL) for long.
  async pruneBatch(tx: Tx, before: string, batch: number): Promise<number> {
    const last = (
      await this.db.get<{ seq: number | null }>(
        tx,
        "SELECT max(seq) AS seq FROM (SELECT seq FROM events WHERE created_at < ? ORDER BY seq LIMIT ?) AS oldest",
        before,
        batch,
      )
    )?.seq;
    if (last === null || last === undefined) return 0;
    const removed = await this.db.run(tx, "DELETE FROM events WHERE seq <= ? AND created_at < ?", last, before);
    await this.db.run(
      tx,
      `INSERT INTO meta (key, value) VALUES (?, ?)
       ON CONFLICT (key) DO UPDATE SET value = CASE WHEN CAST(excluded.value AS BIGINT) > CAST(meta.value AS BIGINT) THEN excluded.value ELSE meta.value END`,
      PRUNED_THROUGH,
      String(last),
    );
    return removed;
  }
}
