import type { EventFilters, EventRow, EventStore, NewEventRow } from "../events.js";
import { eventListQuery } from "../sql/events.js";
import type { Reader, Tx } from "../store.js";
import type { Viewpoint } from "../visibility.js";
import { connectionOf, pgTxOf } from "./transactions.js";
import { EVENTS_CHANNEL } from "./wakeups.js";

const PRUNED_THROUGH = "events_pruned_through";
/** Held by every transaction that writes events, from its first until it ends. */
const EVENTS_LOCK = "cairn:events";

export class PgEvents implements EventStore {
  // Transactions overlap here, and a seq is drawn when the row is inserted, not when it commits: a
  // reader that has passed seq 7 could later meet a 6 that committed after it. So the first event
  // a transaction writes takes the events' lock, held until that transaction ends: seqs are drawn,
  // and become visible, in commit order. That transaction also notifies the other servers' listeners
  // (PostgreSQL delivers it at commit, once per transaction and payload; never after a rollback).
  //
  // The first event takes the lock, notifies and inserts in one statement (one round trip while
  // the lock is held, not three): the row comes from a subquery that takes the lock first, so its
  // seq is drawn under it.
  async insert(tx: Tx, row: NewEventRow, audience?: string[]): Promise<number> {
    const db = connectionOf(tx);
    const state = pgTxOf(tx);
    const first = !state.eventsLocked;
    const source = first ? "FROM (SELECT pg_advisory_xact_lock(hashtextextended(?, 0)), pg_notify(?, '')) AS locked" : "";
    const inserted = await db.get<{ seq: number }>(
      `INSERT INTO events (id, type, agent_id, project, private_to, payload, created_at, restricted)
       SELECT ?, ?, ?, ?, ?, ?, ?, ?::integer ${source} RETURNING seq`,
      row.id,
      row.type,
      row.agent_id,
      row.project,
      row.private_to,
      row.payload,
      row.created_at,
      audience ? 1 : 0,
      ...(first ? [EVENTS_LOCK, EVENTS_CHANNEL] : []),
    );
    if (first) state.holdLock(EVENTS_LOCK);
    const seq = Number(inserted?.seq);
    const agents = [...new Set(audience ?? [])];
    if (agents.length > 0) await db.run("INSERT INTO event_audience (event_seq, agent_id) SELECT ?::bigint, unnest(?::text[])", seq, agents);
    if (first) state.eventsLocked = true;
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

  // The audience as a text[] (pg hands it over as an array), in SQLite's order (its primary key's).
  async since(r: Reader, afterSeq: number, limit: number): Promise<(EventRow & { audience: string[] | null })[]> {
    return connectionOf(r).all<EventRow & { audience: string[] | null }>(
      `SELECT e.*, CASE WHEN e.restricted = 1
         THEN COALESCE((SELECT array_agg(agent_id ORDER BY agent_id) FROM event_audience WHERE event_seq = e.seq), ARRAY[]::text[]) END AS audience
       FROM events e WHERE e.seq > ? ORDER BY e.seq LIMIT ?`,
      afterSeq,
      limit,
    );
  }

  async maxSeq(r: Reader): Promise<number> {
    const db = connectionOf(r);
    return (await db.get<{ seq: number | null }>("SELECT max(seq) AS seq FROM events"))?.seq ?? 0;
  }

  async prunedThrough(r: Reader): Promise<number> {
    const db = connectionOf(r);
    return Number((await db.get<{ value: string }>("SELECT value FROM meta WHERE key = ?", PRUNED_THROUGH))?.value ?? 0);
  }

  // Batches keep a large backlog from holding locks for long.
  async pruneBatch(tx: Tx, before: string, batch: number): Promise<number> {
    const db = connectionOf(tx);
    const last = (
      await db.get<{ seq: number | null }>(
        "SELECT max(seq) AS seq FROM (SELECT seq FROM events WHERE created_at < ? ORDER BY seq LIMIT ?) AS oldest",
        before,
        batch,
      )
    )?.seq;
    if (last === null || last === undefined) return 0;
    const removed = (await db.run("DELETE FROM events WHERE seq <= ? AND created_at < ?", last, before)).changes;
    await db.run(
      `INSERT INTO meta (key, value) VALUES (?, ?)
       ON CONFLICT (key) DO UPDATE SET value = GREATEST(CAST(meta.value AS BIGINT), CAST(excluded.value AS BIGINT))::text`,
      PRUNED_THROUGH,
      String(last),
    );
    return removed;
  }
}
