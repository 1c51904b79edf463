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
import type { Db } from "./connection.js";
import { connectionOf } from "./transactions.js";
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

function replaceTags(db: Db, pk: number, tags: string[]): void {
  db.run("DELETE FROM memory_tags WHERE memory_pk = ?", pk);
  for (const tag of tags) db.run("INSERT INTO memory_tags (tag, memory_pk) VALUES (?, ?)", tag, pk);
}

export class SqliteMemory implements MemoryStore {
  async insert(tx: Tx, row: NewMemoryRow, tags: string[]): Promise<number> {
    const db = connectionOf(tx);
    const result = db.run(
      `INSERT INTO memory (id, type, agent_id, project, scope, content, content_key, confidence, parents, tags,
       created_at, updated_at, version, expires_at, embedding_model, source, source_kind)
     VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
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
    const pk = Number(result.lastInsertRowid);
    replaceTags(db, pk, tags);
    return pk;
  }

  async replaceTags(tx: Tx, pk: number, tags: string[]): Promise<void> {
    replaceTags(connectionOf(tx), pk, tags);
  }

  async byPk(r: Reader, pk: number): Promise<MemoryRow | undefined> {
    const db = connectionOf(r);
    return db.get<MemoryRow>("SELECT * FROM memory WHERE pk = ?", pk);
  }

  async byPks(r: Reader, pks: number[]): Promise<Map<number, MemoryRow>> {
    const db = connectionOf(r);
    const rows = db.all<MemoryRow>("SELECT * FROM memory WHERE pk IN (SELECT value FROM json_each(?))", JSON.stringify(pks));
    return new Map(rows.map((row) => [row.pk, row]));
  }

  async findLive(r: Reader, viewpoint: Viewpoint, nowIso: string, match: IdRef): Promise<MemoryRow[]> {
    const db = connectionOf(r);
    const live = liveClause(viewpoint, nowIso);
    const id = idMatch("m.id", match);
    return db.all<MemoryRow>(`SELECT m.* FROM memory m WHERE ${id.sql} AND ${live.sql.join(" AND ")} LIMIT 2`, ...id.params, ...live.params);
  }

  async mergedInto(r: Reader, viewpoint: Viewpoint, id: string): Promise<string | null> {
    const db = connectionOf(r);
    const visible = visibleMemory("m", viewpoint);
    return (
      db.get<{ superseded_by: string }>(
        `SELECT m.superseded_by FROM memory m WHERE m.id = ? AND m.deleted_at IS NOT NULL AND m.superseded_by IS NOT NULL AND ${visible.sql}`,
        id,
        ...visible.params,
      )?.superseded_by ?? null
    );
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
     WHERE content_key = ? AND deleted_at IS NULL AND type = ? AND scope = ? AND project IS ?
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
    db.run(
      `UPDATE memory SET ${entries.map(([column]) => `${column} = ?`).join(", ")} WHERE pk = ?`,
      ...entries.map(([, value]) => value),
      pk,
    );
  }

  async recordReads(tx: Tx, reads: ReadRecord[]): Promise<void> {
    const db = connectionOf(tx);
    for (const read of reads) {
      const existing = db.get("SELECT 1 FROM memory_readers WHERE memory_pk = ? AND agent_id = ?", read.pk, read.agentId);
      if (existing) {
        db.run(
          "UPDATE memory_readers SET reads = reads + 1, last_read_at = ?, last_context = coalesce(?, last_context) WHERE memory_pk = ? AND agent_id = ?",
          read.at,
          read.context,
          read.pk,
          read.agentId,
        );
        db.run("UPDATE memory SET read_count = read_count + 1 WHERE pk = ?", read.pk);
      } else {
        const inserted = db.run(
          `INSERT INTO memory_readers (memory_pk, agent_id, reads, first_read_at, last_read_at, last_context)
         SELECT pk, ?, 1, ?, ?, ? FROM memory WHERE pk = ?`,
          read.agentId,
          read.at,
          read.at,
          read.context,
          read.pk,
        );
        if (inserted.changes > 0) {
          db.run("UPDATE memory SET read_count = read_count + 1, distinct_readers = distinct_readers + 1 WHERE pk = ?", read.pk);
        }
      }
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
    return db.get<{ count: number }>("SELECT count(*) AS count FROM memory WHERE embedding_model IS NULL AND deleted_at IS NULL")?.count ?? 0;
  }

  async notDeletedAfter(r: Reader, afterPk: number, limit: number): Promise<MemoryRow[]> {
    const db = connectionOf(r);
    return db.all<MemoryRow>("SELECT * FROM memory WHERE deleted_at IS NULL AND pk > ? ORDER BY pk LIMIT ?", afterPk, limit);
  }

  async visibleIds(r: Reader, viewpoint: Viewpoint, ids: string[]): Promise<Set<string>> {
    const db = connectionOf(r);
    const visible = visibleMemory("m", viewpoint);
    const rows = db.all<{ id: string }>(
      `SELECT m.id FROM memory m WHERE m.id IN (SELECT value FROM json_each(?)) AND ${visible.sql}`,
      JSON.stringify(ids),
      ...visible.params,
    );
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

/** The FTS5 query for plain words: each quoted (no operator injection), any one (or, with AND, every one) to match. */
// A double quote inside a word is doubled, so no word can end its string early and become syntax.
export const fts5Query = (words: string[], operator: "OR" | "AND" = "OR"): string => words.map((word) => `"${word.replaceAll('"', '""')}"`).join(` ${operator} `);

/** FTS5 BM25 over content and tags. */
export class SqliteKeywordIndex implements KeywordIndex {
  async search(r: Reader, viewpoint: Viewpoint, nowIso: string, words: string[], filters: MemoryFilters, limit: number): Promise<{ pk: number; rank: number }[]> {
    if (words.length === 0) return [];
    const db = connectionOf(r);
    const clause = liveClause(viewpoint, nowIso);
    filterClause(filters, clause);
    return db.all<{ pk: number; rank: number }>(
      `SELECT m.pk AS pk, f.rank AS rank FROM memory_fts f JOIN memory m ON m.pk = f.rowid
     WHERE memory_fts MATCH ? AND ${clause.sql.join(" AND ")}
     ORDER BY f.rank LIMIT ?`,
      fts5Query(words),
      ...clause.params,
      limit,
    );
  }
}
