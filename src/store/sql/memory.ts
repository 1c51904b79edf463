import type { IdRef } from "../../core/ids.js";
import {
  KIND_ORDER,
  MEMORY_PATCHABLE_COLUMNS,
  type DuplicateKey,
  type Keyset,
  type MemoryFilters,
  type MemoryOrder,
  type MemoryPatch,
  type MemoryRow,
  type MemoryStore,
  type NewMemoryRow,
  type ReadRecord,
} from "../memory.js";
import type { Reader, Tx } from "../store.js";
import type { Viewpoint } from "../visibility.js";
import { LIMIT_PARAM, type SqlDb } from "./dialect.js";
import { idMatch, visibleMemory } from "./visibility.js";

/**
 * Every column of an entry (as `m`) but PostgreSQL's generated keyword column `search`, which
 * SQLite's table does not have, in SQLite's table order: the audit log writes a snapshot in the
 * order it is read and compares snapshots across stores.
 */
export const MEMORY_COLUMNS = `m.pk, m.id, m.type, m.agent_id, m.project, m.scope, m.content, m.content_key, m.confidence, m.parents, m.tags,
  m.headline, m.created_at, m.updated_at, m.version, m.expires_at, m.read_count, m.distinct_readers, m.reinforcement_count,
  m.last_reinforced_at, m.superseded_by, m.embedding_model, m.deleted_at, m.source, m.source_kind, m.stale_since, m.stale_reason, m.change_seq`;

/** The kind order's rank in SQL, written from the list `kindRank` reads. */
const KIND_RANK = `CASE m.type ${KIND_ORDER.map((type, rank) => `WHEN '${type}' THEN ${rank}`).join(" ")} ELSE ${KIND_ORDER.length} END`;

/** WHERE conditions (joined with AND) and their parameters, in order. */
export interface MemoryClause {
  sql: string[];
  params: unknown[];
}

/** Adds a listing's or search's filters on entries `m` to `clause`. */
export function addMemoryFilters(filters: MemoryFilters, clause: MemoryClause): void {
  const add = (sql: string, ...params: unknown[]): void => {
    clause.sql.push(sql);
    clause.params.push(...params);
  };
  if (filters.type !== undefined) add("m.type = ?", filters.type);
  if (filters.tag !== undefined) add("m.pk IN (SELECT memory_pk FROM memory_tags WHERE tag = ?)", filters.tag);
  if (filters.agent !== undefined) add("m.agent_id = ?", filters.agent);
  if (filters.project === null) add("m.project IS NULL");
  else if (filters.project !== undefined) add("m.project = ?", filters.project);
  if (filters.scope !== undefined) add("m.scope = ?", filters.scope);
  if (filters.confidenceMin !== undefined) add("m.confidence >= ?", filters.confidenceMin);
  if (filters.updatedBefore !== undefined) add("m.updated_at < ?", filters.updatedBefore);
  if (filters.createdBefore !== undefined) add("m.created_at < ?", filters.createdBefore);
  if (filters.minVersion !== undefined) add("m.version >= ?", filters.minVersion);
  if (filters.minDistinctReaders !== undefined) add("m.distinct_readers >= ?", filters.minDistinctReaders);
  if (filters.sourceKind !== undefined) add("m.source_kind = ?", filters.sourceKind);
  if (filters.excludeCompiled) add("m.type <> 'compiled'");
}

/** Entries `m` visible to `viewpoint` and live (not deleted, not expired at `nowIso`). */
export function liveMemoryClause(viewpoint: Viewpoint, nowIso: string): MemoryClause {
  const visible = visibleMemory("m", viewpoint);
  return {
    sql: [visible.sql, "m.deleted_at IS NULL", "(m.expires_at IS NULL OR m.expires_at > ?)"],
    params: [...visible.params, nowIso],
  };
}

const PATCHABLE = new Set<string>(MEMORY_PATCHABLE_COLUMNS);

interface ReaderReads {
  pk: number;
  agent: string;
  n: number;
  first_at: string;
  last_at: string;
  context: string | null;
}

/** A batch's reads as one row per entry and reader (an upsert may change a row only once), keyed `<pk> <agent>`. */
function readsByReader(reads: ReadRecord[]): Map<string, ReaderReads> {
  const byReader = new Map<string, ReaderReads>();
  for (const read of reads) {
    const key = `${read.pk} ${read.agentId}`;
    const seen = byReader.get(key);
    if (!seen) {
      byReader.set(key, { pk: read.pk, agent: read.agentId, n: 1, first_at: read.at, last_at: read.at, context: read.context });
      continue;
    }
    seen.n += 1;
    if (read.at < seen.first_at) seen.first_at = read.at;
    if (read.at >= seen.last_at) seen.last_at = read.at;
    seen.context = read.context ?? seen.context;
  }
  return byReader;
}

// A live entry with the same normalised content, type, project and scope (same author if private).
// The project compared through COALESCE, which no index serves: SQLite otherwise took the
// live-entries-per-project index and read every entry of the project (2.8 ms a write at 10,000
// entries, ten times that at 100,000), where the content key finds the one or two rows. The scope
// through a cast: SQLite matches a bare `m.scope = ?` against the merkle index's `scope =
// 'project'` by its bound value, and so prepared the statement again on every run (52 µs a check
// where 16 µs do). The type through `|| ''`, which no index serves either: in the EXISTS of a write's
// survey, SQLite without statistics took the type's index and read every entry of the type (52 ms
// a write at 100,000 entries, against 0.02 through the content key).
const EXACT_DUPLICATE = `m.content_key = ? AND m.deleted_at IS NULL AND m.type || '' = ? AND m.scope = CAST(? AS TEXT) AND COALESCE(m.project, '') = COALESCE(CAST(? AS TEXT), '')
  AND (m.scope = 'project' OR m.agent_id = ?) AND (m.expires_at IS NULL OR m.expires_at > ?)`;
const exactDuplicateParams = (key: DuplicateKey, nowIso: string): unknown[] => [key.contentKey, key.type, key.scope, key.project, key.agentId, nowIso];

export class SqlMemory implements MemoryStore {
  constructor(private readonly db: SqlDb) {}

  async insert(tx: Tx, row: NewMemoryRow, tags: string[]): Promise<number> {
    const [inserted] = await this.db.all<{ pk: unknown }>(
      tx,
      `INSERT INTO memory (id, type, agent_id, project, scope, content, content_key, confidence, parents, tags,
       created_at, updated_at, version, expires_at, embedding_model, source, source_kind)
       VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?) RETURNING pk`,
      row.id, row.type, row.agent_id, row.project, row.scope, row.content, row.content_key, row.confidence, row.parents, row.tags,
      row.created_at, row.updated_at, row.version, row.expires_at, row.embedding_model, row.source, row.source_kind,
    );
    const pk = Number(inserted?.pk);
    await this.addTags(tx, pk, tags);
    return pk;
  }

  async replaceTags(tx: Tx, pk: number, tags: string[]): Promise<void> {
    await this.db.run(tx, "DELETE FROM memory_tags WHERE memory_pk = ?", pk);
    await this.addTags(tx, pk, tags);
  }

  private async addTags(tx: Tx, pk: number, tags: string[]): Promise<void> {
    if (tags.length === 0) return;
    const listed = this.db.dialect.listRows(tags, "t");
    await this.db.run(tx, `INSERT INTO memory_tags (tag, memory_pk) SELECT t.value, CAST(? AS BIGINT) FROM ${listed.sql}`, pk, ...listed.params);
  }

  // In a transaction the row is locked until it ends: of two transactions changing one entry, the
  // second reads it as the first left it.
  byPk(r: Reader, pk: number): Promise<MemoryRow | undefined> {
    return this.db.get<MemoryRow>(r, `SELECT ${MEMORY_COLUMNS} FROM memory m WHERE m.pk = ?${this.db.dialect.lockRows(r, "m")}`, pk);
  }

  async byPks(r: Reader, pks: number[]): Promise<Map<number, MemoryRow>> {
    const listed = this.db.dialect.inKeys("m.pk", pks);
    const rows = await this.db.all<MemoryRow>(r, `SELECT ${MEMORY_COLUMNS} FROM memory m WHERE ${listed.sql}`, ...listed.params);
    return new Map(rows.map((row) => [row.pk, row]));
  }

  async lockByPks(tx: Tx, pks: number[]): Promise<Map<number, MemoryRow>> {
    if (pks.length === 0) return new Map();
    const listed = this.db.dialect.inKeys("m.pk", pks);
    const rows = await this.db.all<MemoryRow>(tx, `SELECT ${MEMORY_COLUMNS} FROM memory m WHERE ${listed.sql} ORDER BY m.pk${this.db.dialect.lockRows(tx, "m")}`, ...listed.params);
    return new Map(rows.map((row) => [row.pk, row]));
  }

  findLive(r: Reader, viewpoint: Viewpoint, nowIso: string, match: IdRef): Promise<MemoryRow[]> {
    const live = liveMemoryClause(viewpoint, nowIso);
    const id = idMatch("m.id", match);
    return this.db.all<MemoryRow>(
      r,
      `SELECT ${MEMORY_COLUMNS} FROM memory m WHERE ${id.sql} AND ${live.sql.join(" AND ")} LIMIT 2${this.db.dialect.lockRows(r, "m")}`,
      ...id.params,
      ...live.params,
    );
  }

  async mergedInto(r: Reader, viewpoint: Viewpoint, id: string): Promise<string | null> {
    const visible = visibleMemory("m", viewpoint);
    const row = await this.db.get<{ superseded_by: string }>(
      r,
      `SELECT m.superseded_by FROM memory m WHERE m.id = ? AND m.deleted_at IS NOT NULL AND m.superseded_by IS NOT NULL AND ${visible.sql}`,
      id,
      ...visible.params,
    );
    return row?.superseded_by ?? null;
  }

  list(
    r: Reader,
    viewpoint: Viewpoint,
    nowIso: string,
    filters: MemoryFilters,
    after: (Keyset & { rank?: number | undefined }) | null,
    limit: number,
    order: MemoryOrder = "recent",
  ): Promise<MemoryRow[]> {
    const clause = liveMemoryClause(viewpoint, nowIso);
    addMemoryFilters(filters, clause);
    const byKind = order === "kind";
    if (after && byKind) {
      clause.sql.push(`(${KIND_RANK} > ? OR (${KIND_RANK} = ? AND (m.updated_at < ? OR (m.updated_at = ? AND m.pk < ?))))`);
      clause.params.push(after.rank ?? 0, after.rank ?? 0, after.at, after.at, after.pk);
    } else if (after) {
      clause.sql.push("(m.updated_at < ? OR (m.updated_at = ? AND m.pk < ?))");
      clause.params.push(after.at, after.at, after.pk);
    }
    return this.db.all<MemoryRow>(
      r,
      `SELECT ${MEMORY_COLUMNS} FROM memory m WHERE ${clause.sql.join(" AND ")}
        ORDER BY ${byKind ? `${KIND_RANK}, ` : ""}m.updated_at DESC, m.pk DESC LIMIT ?`,
      ...clause.params,
      limit,
    );
  }

  delta(
    r: Reader,
    viewpoint: Viewpoint,
    since: string,
    filters: Pick<MemoryFilters, "agent" | "project" | "type">,
    after: Keyset | null,
    limit: number,
  ): Promise<MemoryRow[]> {
    const visible = visibleMemory("m", viewpoint);
    const clause: MemoryClause = { sql: [visible.sql, "m.updated_at > ?"], params: [...visible.params, since] };
    addMemoryFilters(filters, clause);
    if (after) {
      clause.sql.push("(m.updated_at > ? OR (m.updated_at = ? AND m.pk > ?))");
      clause.params.push(after.at, after.at, after.pk);
    }
    return this.db.all<MemoryRow>(
      r,
      `SELECT ${MEMORY_COLUMNS} FROM memory m WHERE ${clause.sql.join(" AND ")} ORDER BY m.updated_at, m.pk LIMIT ?`,
      ...clause.params,
      limit,
    );
  }

  directives(r: Reader, viewpoint: Viewpoint, nowIso: string, project: string | undefined, limit: number): Promise<MemoryRow[]> {
    const clause = liveMemoryClause(viewpoint, nowIso);
    clause.sql.push("m.type = 'directive'");
    if (project !== undefined) {
      clause.sql.push("(m.project IS NULL OR m.project = ?)");
      clause.params.push(project);
    }
    return this.db.all<MemoryRow>(
      r,
      `SELECT ${MEMORY_COLUMNS} FROM memory m WHERE ${clause.sql.join(" AND ")}
        ORDER BY CASE WHEN m.scope = 'agent' THEN 2 WHEN m.project IS NULL THEN 0 ELSE 1 END,
                 coalesce(m.project, ''), m.created_at, m.pk
        LIMIT ?`,
      ...clause.params,
      limit,
    );
  }

  exactDuplicate(r: Reader, key: DuplicateKey, nowIso: string): Promise<MemoryRow | undefined> {
    return this.db.get<MemoryRow>(r, `SELECT ${MEMORY_COLUMNS} FROM memory m WHERE ${EXACT_DUPLICATE} ORDER BY m.pk LIMIT 1`, ...exactDuplicateParams(key, nowIso));
  }

  // One statement, so one round trip before a write's scans: the mark and the check see one snapshot.
  async surveyStart(r: Reader, key: DuplicateKey, nowIso: string): Promise<{ mark: number; duplicate: boolean }> {
    const row = await this.db.get<{ mark: number | null; duplicate: number }>(
      r,
      `SELECT (SELECT max(seq) FROM events) AS mark, CAST(EXISTS (SELECT 1 FROM memory m WHERE ${EXACT_DUPLICATE}) AS INTEGER) AS duplicate`,
      ...exactDuplicateParams(key, nowIso),
    );
    return { mark: Number(row?.mark ?? 0), duplicate: row?.duplicate === 1 };
  }

  async patch(tx: Tx, pk: number, patch: MemoryPatch): Promise<void> {
    const entries = Object.entries(patch).filter(([column, value]) => PATCHABLE.has(column) && value !== undefined);
    if (entries.length === 0) return;
    await this.db.run(
      tx,
      `UPDATE memory SET ${entries.map(([column]) => `${column} = ?`).join(", ")} WHERE pk = ?`,
      ...entries.map(([, value]) => value),
      pk,
    );
  }

  // An upsert rather than a look-then-write: two transactions recording the same agent's first
  // read of an entry at once (PostgreSQL's overlap) would otherwise both insert, and one would be
  // retried. A reader's row holds only this batch's reads exactly when the upsert inserted it; no
  // row comes back for an entry that is gone.
  async recordReads(tx: Tx, reads: ReadRecord[]): Promise<void> {
    const byReader = readsByReader(reads);
    // In key order: transactions recording overlapping reads (several flushes, several servers)
    // then lock in one order and never wait on each other in a cycle.
    const rows = [...byReader.values()].sort((a, b) => a.pk - b.pk || (a.agent < b.agent ? -1 : a.agent > b.agent ? 1 : 0));
    if (rows.length === 0) return;
    const pks = [...new Set(rows.map((row) => row.pk))];
    // The entries first, in key order (PostgreSQL; SQLite's writers take turns): whoever holds an
    // entry's row also holds its readers' rows, so the two statements below wait on nobody in a cycle.
    const lock = this.db.dialect.lockRows(tx, "m");
    if (lock !== "") {
      const keys = this.db.dialect.inKeys("m.pk", pks);
      await this.db.all(tx, `SELECT m.pk FROM memory m WHERE ${keys.sql} ORDER BY m.pk${lock}`, ...keys.params);
    }
    const source = this.db.dialect.jsonRecords(rows, { pk: "integer", agent: "text", n: "integer", first_at: "text", last_at: "text", context: "text" }, "r");
    const recorded = await this.db.all<{ memory_pk: number | string; agent_id: string; reads: number | string }>(
      tx,
      `INSERT INTO memory_readers (memory_pk, agent_id, reads, first_read_at, last_read_at, last_context)
       SELECT r.pk, r.agent, r.n, r.first_at, r.last_at, r.context FROM ${source.sql}
       WHERE EXISTS (SELECT 1 FROM memory m WHERE m.pk = r.pk) ORDER BY r.pk, r.agent
       ON CONFLICT (memory_pk, agent_id) DO UPDATE
         SET reads = memory_readers.reads + excluded.reads, last_read_at = excluded.last_read_at,
             last_context = coalesce(excluded.last_context, memory_readers.last_context)
       RETURNING memory_pk, agent_id, reads`,
      ...source.params,
    );
    // A reader is new to an entry when its row holds only this batch's reads.
    const counts = new Map<number, { pk: number; n: number; fresh: number }>();
    for (const row of recorded) {
      const pk = Number(row.memory_pk);
      const batch = byReader.get(`${pk} ${row.agent_id}`);
      if (!batch) continue;
      const count = counts.get(pk) ?? { pk, n: 0, fresh: 0 };
      count.n += batch.n;
      if (Number(row.reads) === batch.n) count.fresh += 1;
      counts.set(pk, count);
    }
    if (counts.size === 0) return;
    const changes = this.db.dialect.jsonRecords([...counts.values()], { pk: "integer", n: "integer", fresh: "integer" }, "c");
    await this.db.run(
      tx,
      `UPDATE memory SET read_count = read_count + c.n, distinct_readers = distinct_readers + c.fresh FROM ${changes.sql} WHERE memory.pk = c.pk`,
      ...changes.params,
    );
  }

  expired(r: Reader, nowIso: string, limit: number): Promise<MemoryRow[]> {
    return this.db.all<MemoryRow>(
      r,
      `SELECT ${MEMORY_COLUMNS} FROM memory m WHERE m.expires_at IS NOT NULL AND m.expires_at <= ? AND m.deleted_at IS NULL ORDER BY m.expires_at LIMIT ?${this.db.dialect.skipLocked(r, "m")}`,
      nowIso,
      limit,
    );
  }

  unembedded(r: Reader, limit: number): Promise<MemoryRow[]> {
    return this.db.all<MemoryRow>(r, `SELECT ${MEMORY_COLUMNS} FROM memory m WHERE m.embedding_model IS NULL AND m.deleted_at IS NULL ORDER BY m.pk LIMIT ?`, limit);
  }

  /** Entries not deleted that have no vector yet: the backfill's queue (a partial index keeps this count cheap). */
  async unembeddedCount(r: Reader): Promise<number> {
    const row = await this.db.get<{ count: number }>(r, "SELECT count(*) AS count FROM memory WHERE embedding_model IS NULL AND deleted_at IS NULL");
    return row?.count ?? 0;
  }

  notDeletedAfter(r: Reader, afterPk: number, limit: number): Promise<MemoryRow[]> {
    return this.db.all<MemoryRow>(r, `SELECT ${MEMORY_COLUMNS} FROM memory m WHERE m.deleted_at IS NULL AND m.pk > ? ORDER BY m.pk LIMIT ?`, afterPk, limit);
  }

  async visibleIds(r: Reader, viewpoint: Viewpoint, ids: string[]): Promise<Set<string>> {
    const visible = visibleMemory("m", viewpoint);
    const listed = this.db.dialect.inList("m.id", ids);
    const rows = await this.db.all<{ id: string }>(r, `SELECT m.id FROM memory m WHERE ${listed.sql} AND ${visible.sql}`, ...listed.params, ...visible.params);
    return new Set(rows.map((row) => row.id));
  }

  projectShared(r: Reader, project: string): Promise<MemoryRow[]> {
    return this.db.all<MemoryRow>(
      r,
      `SELECT ${MEMORY_COLUMNS} FROM memory m WHERE m.project = ? AND m.scope = 'project' AND m.deleted_at IS NULL ORDER BY m.pk${this.db.dialect.lockRows(r, "m")}`,
      project,
    );
  }

  changesSince(r: Reader, viewpoint: Viewpoint, afterSeq: number, limit: number): Promise<MemoryRow[]> {
    const visible = visibleMemory("m", viewpoint);
    // Code is not news: a compile's entries would fill every session's delta (docs/search.md).
    return this.db.all<MemoryRow>(
      r,
      `SELECT ${MEMORY_COLUMNS} FROM memory m WHERE m.change_seq > ? AND m.type <> 'compiled' AND ${visible.sql} ORDER BY m.change_seq ${LIMIT_PARAM}`,
      afterSeq,
      ...visible.params,
      limit,
    );
  }

}
