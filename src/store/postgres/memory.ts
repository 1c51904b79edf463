import {
  MEMORY_PATCHABLE_COLUMNS,
  type DuplicateKey,
  type KeywordIndex,
  type Keyset,
  type MemoryFilters,
  type MemoryOrder,
  type MemoryPatch,
  type MemoryRow,
  type MemoryStore,
  type NewMemoryRow,
  type ReadRecord,
} from "../memory.js";
import type { IdRef } from "../../core/ids.js";
import type { Reader, Tx } from "../store.js";
import type { Viewpoint } from "../visibility.js";
import type { PgDb } from "./connection.js";
import { connectionOf, rowLock } from "./transactions.js";
import { idMatch, visibleMemory } from "../sql/visibility.js";

interface Clause {
  sql: string[];
  params: unknown[];
}

function filterClause(filters: MemoryFilters, clause: Clause): void {
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
}

/** Visible, live (not deleted, not expired) entries. */
function liveClause(viewpoint: Viewpoint, nowIso: string): Clause {
  const visible = visibleMemory("m", viewpoint);
  return {
    sql: [visible.sql, "m.deleted_at IS NULL", "(m.expires_at IS NULL OR m.expires_at > ?)"],
    params: [...visible.params, nowIso],
  };
}

/** The kind order's rank in SQL: the same order as `kindRank`. */
const KIND_RANK = "CASE m.type WHEN 'directive' THEN 0 WHEN 'doc' THEN 1 ELSE 2 END";

const PATCHABLE = new Set<string>(MEMORY_PATCHABLE_COLUMNS);

async function replaceTags(db: PgDb, pk: number, tags: string[]): Promise<void> {
  await db.run("DELETE FROM memory_tags WHERE memory_pk = ?", pk);
  if (tags.length === 0) return;
  await db.run("INSERT INTO memory_tags (tag, memory_pk) SELECT t, ?::bigint FROM unnest(?::text[]) AS t", pk, tags);
}

export class PgMemory implements MemoryStore {
  async insert(tx: Tx, row: NewMemoryRow, tags: string[]): Promise<number> {
    const db = connectionOf(tx);
    const result = await db.run(
      `INSERT INTO memory (id, type, agent_id, project, scope, content, content_key, confidence, parents, tags,
       created_at, updated_at, version, expires_at, embedding_model, source, source_kind)
     VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)
     RETURNING pk`,
      row.id,
      row.type,
      row.agent_id,
      row.project,
      row.scope,
      row.content,
      row.content_key,
      row.confidence,
      row.parents,
      row.tags,
      row.created_at,
      row.updated_at,
      row.version,
      row.expires_at,
      row.embedding_model,
      row.source,
      row.source_kind,
    );
    const pk = Number(result.rows[0]?.pk);
    await replaceTags(db, pk, tags);
    return pk;
  }

  async replaceTags(tx: Tx, pk: number, tags: string[]): Promise<void> {
    await replaceTags(connectionOf(tx), pk, tags);
  }

  async byPk(r: Reader, pk: number): Promise<MemoryRow | undefined> {
    const db = connectionOf(r);
    return db.get<MemoryRow>(`SELECT * FROM memory m WHERE m.pk = ?${rowLock(r, "m")}`, pk);
  }

  async byPks(r: Reader, pks: number[]): Promise<Map<number, MemoryRow>> {
    const db = connectionOf(r);
    const rows = await db.all<MemoryRow>("SELECT * FROM memory WHERE pk = ANY(?::bigint[])", pks);
    return new Map(rows.map((row) => [row.pk, row]));
  }

  async findLive(r: Reader, viewpoint: Viewpoint, nowIso: string, match: IdRef): Promise<MemoryRow[]> {
    const db = connectionOf(r);
    const live = liveClause(viewpoint, nowIso);
    const id = idMatch("m.id", match);
    return db.all<MemoryRow>(`SELECT m.* FROM memory m WHERE ${id.sql} AND ${live.sql.join(" AND ")} LIMIT 2${rowLock(r, "m")}`, ...id.params, ...live.params);
  }

  async mergedInto(r: Reader, viewpoint: Viewpoint, id: string): Promise<string | null> {
    const db = connectionOf(r);
    const visible = visibleMemory("m", viewpoint);
    const row = await db.get<{ superseded_by: string }>(
      `SELECT m.superseded_by FROM memory m WHERE m.id = ? AND m.deleted_at IS NOT NULL AND m.superseded_by IS NOT NULL AND ${visible.sql}`,
      id,
      ...visible.params,
    );
    return row?.superseded_by ?? null;
  }

  async list(
    r: Reader,
    viewpoint: Viewpoint,
    nowIso: string,
    filters: MemoryFilters,
    after: (Keyset & { rank?: number | undefined }) | null,
    limit: number,
    order: MemoryOrder = "recent",
  ): Promise<MemoryRow[]> {
    const db = connectionOf(r);
    const clause = liveClause(viewpoint, nowIso);
    filterClause(filters, clause);
    const byKind = order === "kind";
    if (after && byKind) {
      clause.sql.push(`(${KIND_RANK} > ? OR (${KIND_RANK} = ? AND (m.updated_at < ? OR (m.updated_at = ? AND m.pk < ?))))`);
      clause.params.push(after.rank ?? 0, after.rank ?? 0, after.at, after.at, after.pk);
    } else if (after) {
      clause.sql.push("(m.updated_at < ? OR (m.updated_at = ? AND m.pk < ?))");
      clause.params.push(after.at, after.at, after.pk);
    }
    return db.all<MemoryRow>(
      `SELECT m.* FROM memory m WHERE ${clause.sql.join(" AND ")} ORDER BY ${byKind ? `${KIND_RANK}, ` : ""}m.updated_at DESC, m.pk DESC LIMIT ?`,
      ...clause.params,
      limit,
    );
  }

  async delta(
    r: Reader,
    viewpoint: Viewpoint,
    since: string,
    filters: Pick<MemoryFilters, "agent" | "project" | "type">,
    after: Keyset | null,
    limit: number,
  ): Promise<MemoryRow[]> {
    const db = connectionOf(r);
    const visible = visibleMemory("m", viewpoint);
    const clause: Clause = { sql: [visible.sql, "m.updated_at > ?"], params: [...visible.params, since] };
    filterClause(filters, clause);
    if (after) {
      clause.sql.push("(m.updated_at > ? OR (m.updated_at = ? AND m.pk > ?))");
      clause.params.push(after.at, after.at, after.pk);
    }
    return db.all<MemoryRow>(
      `SELECT m.* FROM memory m WHERE ${clause.sql.join(" AND ")} ORDER BY m.updated_at, m.pk LIMIT ?`,
      ...clause.params,
      limit,
    );
  }

  async directives(r: Reader, viewpoint: Viewpoint, nowIso: string, project: string | undefined, limit: number): Promise<MemoryRow[]> {
    const db = connectionOf(r);
    const clause = liveClause(viewpoint, nowIso);
    clause.sql.push("m.type = 'directive'");
    if (project !== undefined) {
      clause.sql.push("(m.project IS NULL OR m.project = ?)");
      clause.params.push(project);
    }
    return db.all<MemoryRow>(
      `SELECT m.* FROM memory m WHERE ${clause.sql.join(" AND ")}
     ORDER BY CASE WHEN m.scope = 'agent' THEN 2 WHEN m.project IS NULL THEN 0 ELSE 1 END,
              coalesce(m.project, ''), m.created_at, m.pk
     LIMIT ?`,
      ...clause.params,
      limit,
    );
  }

  async exactDuplicate(r: Reader, key: DuplicateKey, nowIso: string): Promise<MemoryRow | undefined> {
    const db = connectionOf(r);
    return db.get<MemoryRow>(
      `SELECT * FROM memory
     WHERE content_key = ? AND deleted_at IS NULL AND type = ? AND scope = ? AND project IS NOT DISTINCT FROM ?::text
       AND (scope = 'project' OR agent_id = ?) AND (expires_at IS NULL OR expires_at > ?)
     ORDER BY pk LIMIT 1`,
      key.contentKey,
      key.type,
      key.scope,
      key.project,
      key.agentId,
      nowIso,
    );
  }

  async patch(tx: Tx, pk: number, patch: MemoryPatch): Promise<void> {
    const db = connectionOf(tx);
    const entries = Object.entries(patch).filter(([column, value]) => PATCHABLE.has(column) && value !== undefined);
    if (entries.length === 0) return;
    await db.run(
      `UPDATE memory SET ${entries.map(([column]) => `${column} = ?`).join(", ")} WHERE pk = ?`,
      ...entries.map(([, value]) => value),
      pk,
    );
  }

  // One upsert per read rather than SQLite's look-then-write: two transactions recording the same
  // agent's first read of an entry at once would otherwise both insert, and one would be retried.
  // A reader row holds `reads = 1` exactly when this statement inserted it.
  async recordReads(tx: Tx, reads: ReadRecord[]): Promise<void> {
    const db = connectionOf(tx);
    for (const read of reads) {
      const recorded = await db.get<{ reads: number }>(
        `INSERT INTO memory_readers (memory_pk, agent_id, reads, first_read_at, last_read_at, last_context)
         SELECT pk, ?::text, 1, ?::text, ?::text, ?::text FROM memory WHERE pk = ?
         ON CONFLICT (memory_pk, agent_id) DO UPDATE
           SET reads = memory_readers.reads + 1, last_read_at = excluded.last_read_at,
               last_context = coalesce(excluded.last_context, memory_readers.last_context)
         RETURNING reads`,
        read.agentId,
        read.at,
        read.at,
        read.context,
        read.pk,
      );
      if (!recorded) continue;
      await db.run(
        "UPDATE memory SET read_count = read_count + 1, distinct_readers = distinct_readers + ?::int WHERE pk = ?",
        recorded.reads === 1 ? 1 : 0,
        read.pk,
      );
    }
  }

  async expired(r: Reader, nowIso: string, limit: number): Promise<MemoryRow[]> {
    const db = connectionOf(r);
    return db.all<MemoryRow>(
      "SELECT * FROM memory WHERE expires_at IS NOT NULL AND expires_at <= ? AND deleted_at IS NULL ORDER BY expires_at LIMIT ?",
      nowIso,
      limit,
    );
  }

  async unembedded(r: Reader, limit: number): Promise<MemoryRow[]> {
    const db = connectionOf(r);
    return db.all<MemoryRow>("SELECT * FROM memory WHERE embedding_model IS NULL AND deleted_at IS NULL ORDER BY pk LIMIT ?", limit);
  }

  /** Entries not deleted that have no vector yet: the backfill's queue (a partial index keeps this count cheap). */
  async unembeddedCount(r: Reader): Promise<number> {
    const db = connectionOf(r);
    const row = await db.get<{ count: number }>("SELECT count(*) AS count FROM memory WHERE embedding_model IS NULL AND deleted_at IS NULL");
    return row?.count ?? 0;
  }

  async notDeletedAfter(r: Reader, afterPk: number, limit: number): Promise<MemoryRow[]> {
    const db = connectionOf(r);
    return db.all<MemoryRow>("SELECT * FROM memory WHERE deleted_at IS NULL AND pk > ? ORDER BY pk LIMIT ?", afterPk, limit);
  }

  async visibleIds(r: Reader, viewpoint: Viewpoint, ids: string[]): Promise<Set<string>> {
    const db = connectionOf(r);
    const visible = visibleMemory("m", viewpoint);
    const rows = await db.all<{ id: string }>(`SELECT m.id FROM memory m WHERE m.id = ANY(?::text[]) AND ${visible.sql}`, ids, ...visible.params);
    return new Set(rows.map((row) => row.id));
  }

  async projectShared(r: Reader, project: string): Promise<MemoryRow[]> {
    const db = connectionOf(r);
    return db.all<MemoryRow>("SELECT * FROM memory WHERE project = ? AND scope = 'project' AND deleted_at IS NULL ORDER BY pk", project);
  }

  async changesSince(r: Reader, viewpoint: Viewpoint, since: string | null, limit: number): Promise<MemoryRow[]> {
    const db = connectionOf(r);
    const visible = visibleMemory("m", viewpoint);
    return db.all<MemoryRow>(
      `SELECT m.* FROM memory m WHERE ${visible.sql} AND m.updated_at > ? ORDER BY m.updated_at, m.pk LIMIT ?`,
      ...visible.params,
      since ?? "",
      limit,
    );
  }

  async changesAt(r: Reader, viewpoint: Viewpoint, at: string, limit: number): Promise<MemoryRow[]> {
    const db = connectionOf(r);
    const visible = visibleMemory("m", viewpoint);
    return db.all<MemoryRow>(`SELECT m.* FROM memory m WHERE ${visible.sql} AND m.updated_at = ? ORDER BY m.pk LIMIT ?`, ...visible.params, at, limit);
  }
}

/**
 * The query of plain words, any one of which may match: each word becomes its own
 * `plainto_tsquery('english', word)` (stemmed; a stopword gives an empty query and is dropped),
 * parenthesised and joined with `|`. The words are bound as one text array, never spliced into the
 * SQL, and `plainto_tsquery` treats its input as text, not query syntax. When every word is a
 * stopword the aggregate is NULL, and `search @@ NULL` matches nothing.
 */
const WORDS_QUERY = `(SELECT string_agg('(' || plainto_tsquery('english', w)::text || ')', ' | ')::tsquery AS q
   FROM unnest(?::text[]) AS w WHERE plainto_tsquery('english', w)::text <> '')`;

/**
 * PostgreSQL full-text search over content and tags (`memory.search`, a stored generated tsvector
 * with the 'english' configuration, GIN-indexed). The rank is `ts_rank_cd` (cover density,
 * normalised to 0..1 by flag 32), negated so that lower is better as the interface says. It is
 * not BM25 (SQLite's FTS5 rank): it has no inverse document frequency, so the order of matches
 * differs from SQLite's; search quality is measured against SQLite's.
 */
export class PgKeywordIndex implements KeywordIndex {
  async search(r: Reader, viewpoint: Viewpoint, nowIso: string, words: string[], filters: MemoryFilters, limit: number): Promise<{ pk: number; rank: number }[]> {
    if (words.length === 0) return [];
    const db = connectionOf(r);
    const clause = liveClause(viewpoint, nowIso);
    filterClause(filters, clause);
    return db.all<{ pk: number; rank: number }>(
      `SELECT m.pk AS pk, (-ts_rank_cd(m.search, query.q, 32))::float8 AS rank
     FROM ${WORDS_QUERY} AS query JOIN memory m ON m.search @@ query.q
     WHERE ${clause.sql.join(" AND ")}
     ORDER BY rank, m.pk LIMIT ?`,
      words,
      ...clause.params,
      limit,
    );
  }
}
