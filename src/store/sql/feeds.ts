import type { FeedPatch, FeedRow, FeedStore, NewFeedRow } from "../feeds.js";
import type { Reader, Tx } from "../store.js";
import type { Viewpoint } from "../visibility.js";
import type { SqlDb } from "./dialect.js";
import { visibleInProject } from "./visibility.js";

const FEED_COLUMNS = `f.pk, f.id, f.project, f.agent_id, f.url, f.url_key, f.name, f.tags, f.interval_minutes, f.max_items_per_poll, f.confidence,
  f.paused, f.failing, f.failures, f.last_polled_at, f.last_success_at, f.last_error, f.next_poll_at, f.etag, f.last_modified, f.items_ingested,
  f.primed, f.lease_until, f.lease_holder, f.created_at, f.updated_at`;

/** A feed may be polled when it is not paused, and no poll holds a lease on it that has not lapsed. */
const FREE = "f.paused = 0 AND (f.lease_until IS NULL OR f.lease_until <= ?)";

export class SqlFeeds implements FeedStore {
  constructor(private readonly db: SqlDb) {}

  async insert(tx: Tx, row: NewFeedRow): Promise<number> {
    const [inserted] = await this.db.all<{ pk: unknown }>(
      tx,
      `INSERT INTO feeds (id, project, project_key, agent_id, url, url_key, name, tags, interval_minutes, max_items_per_poll, confidence, paused,
         failing, failures, last_polled_at, last_success_at, last_error, next_poll_at, etag, last_modified, items_ingested, primed, created_at, updated_at)
       VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?) RETURNING pk`,
      row.id, row.project, row.project ?? "", row.agent_id, row.url, row.url_key, row.name, row.tags, row.interval_minutes, row.max_items_per_poll,
      row.confidence, row.paused, row.failing, row.failures, row.last_polled_at, row.last_success_at, row.last_error, row.next_poll_at, row.etag,
      row.last_modified, row.items_ingested, row.primed, row.created_at, row.updated_at,
    );
    return Number(inserted?.pk);
  }

  byId(r: Reader, id: string): Promise<FeedRow | undefined> {
    return this.db.get<FeedRow>(r, `SELECT ${FEED_COLUMNS} FROM feeds f WHERE f.id = ?`, id);
  }

  byUrl(r: Reader, project: string | null, urlKey: string): Promise<FeedRow | undefined> {
    return this.db.get<FeedRow>(r, `SELECT ${FEED_COLUMNS} FROM feeds f WHERE f.project_key = ? AND f.url_key = ?`, project ?? "", urlKey);
  }

  list(r: Reader, viewpoint: Viewpoint, project: string | null | undefined, afterPk: number, limit: number): Promise<FeedRow[]> {
    const visible = visibleInProject("f", viewpoint);
    const where = [visible.sql, "f.pk > ?"];
    const params: unknown[] = [...visible.params, afterPk];
    if (project !== undefined) {
      where.push("f.project_key = ?");
      params.push(project ?? "");
    }
    return this.db.all<FeedRow>(r, `SELECT ${FEED_COLUMNS} FROM feeds f WHERE ${where.join(" AND ")} ORDER BY f.pk LIMIT ?`, ...params, limit);
  }

  async patch(tx: Tx, pk: number, patch: FeedPatch): Promise<void> {
    const entries = Object.entries(patch).filter(([, value]) => value !== undefined);
    if (entries.length === 0) return;
    await this.db.run(tx, `UPDATE feeds SET ${entries.map(([column]) => `${column} = ?`).join(", ")} WHERE pk = ?`, ...entries.map(([, value]) => value), pk);
  }

  async delete(tx: Tx, pk: number): Promise<boolean> {
    return (await this.db.run(tx, "DELETE FROM feeds WHERE pk = ?", pk)) > 0;
  }

  // The UPDATE repeats the conditions: on PostgreSQL a row another claim updated between the
  // pick's read and this write is re-checked as it now is, and passed over when taken. The pick is
  // a MATERIALIZED step of its own, run once: as the UPDATE's subquery PostgreSQL may run it again
  // for each row updated, each run taking the next due feed past `limit` (as the inbox's consume did).
  claimDue(tx: Tx, nowIso: string, holder: string, leaseUntil: string, limit: number): Promise<FeedRow[]> {
    return this.db.all<FeedRow>(
      tx,
      `WITH picked AS MATERIALIZED (
          SELECT f.pk FROM feeds f WHERE f.next_poll_at <= ? AND ${FREE} ORDER BY f.next_poll_at, f.pk LIMIT ?${this.db.dialect.skipLocked(tx, "f")})
       UPDATE feeds SET lease_until = ?, lease_holder = ?
        WHERE pk IN (SELECT p.pk FROM picked p)
          AND next_poll_at <= ? AND paused = 0 AND (lease_until IS NULL OR lease_until <= ?)
        RETURNING ${FEED_COLUMNS.replaceAll("f.", "")}`,
      nowIso, nowIso, limit, leaseUntil, holder, nowIso, nowIso,
    );
  }

  claimOne(tx: Tx, pk: number, nowIso: string, holder: string, leaseUntil: string): Promise<FeedRow | undefined> {
    return this.db.get<FeedRow>(
      tx,
      `UPDATE feeds SET lease_until = ?, lease_holder = ?
        WHERE pk = ? AND (lease_until IS NULL OR lease_until <= ?)
        RETURNING ${FEED_COLUMNS.replaceAll("f.", "")}`,
      leaseUntil, holder, pk, nowIso,
    );
  }

  async finishPoll(tx: Tx, pk: number, holder: string, patch: FeedPatch, ingested: number): Promise<boolean> {
    const entries = Object.entries(patch).filter(([, value]) => value !== undefined);
    const sets = [...entries.map(([column]) => `${column} = ?`), "items_ingested = items_ingested + ?", "lease_until = NULL", "lease_holder = NULL"];
    const changed = await this.db.run(
      tx,
      `UPDATE feeds SET ${sets.join(", ")} WHERE pk = ? AND lease_holder = ?`,
      ...entries.map(([, value]) => value),
      ingested,
      pk,
      holder,
    );
    return changed > 0;
  }

  async seenKeys(tx: Tx, feedPk: number, keys: readonly string[], at: string): Promise<Set<string>> {
    if (keys.length === 0) return new Set();
    const listed = this.db.dialect.inList("item_key", keys);
    const seen = await this.db.all<{ item_key: string }>(
      tx,
      `UPDATE feed_items SET last_seen_at = ? WHERE feed_pk = ? AND ${listed.sql} RETURNING item_key`,
      at,
      feedPk,
      ...listed.params,
    );
    return new Set(seen.map((row) => row.item_key));
  }

  async recordItem(tx: Tx, feedPk: number, key: string, memoryId: string | null, at: string): Promise<void> {
    await this.db.run(
      tx,
      `INSERT INTO feed_items (feed_pk, item_key, memory_id, first_seen_at, last_seen_at) VALUES (?, ?, ?, ?, ?)
       ON CONFLICT (feed_pk, item_key) DO UPDATE SET last_seen_at = excluded.last_seen_at`,
      feedPk, key, memoryId, at, at,
    );
  }

  forgetItems(tx: Tx, before: string, limit: number): Promise<number> {
    return this.db.run(
      tx,
      `DELETE FROM feed_items WHERE (feed_pk, item_key) IN (SELECT i.feed_pk, i.item_key FROM feed_items i WHERE i.last_seen_at < ? LIMIT ?)`,
      before,
      limit,
    );
  }

  async countInProject(r: Reader, project: string | null): Promise<number> {
    return Number((await this.db.get<{ n: unknown }>(r, "SELECT COUNT(*) AS n FROM feeds WHERE project_key = ?", project ?? ""))?.n ?? 0);
  }
}
