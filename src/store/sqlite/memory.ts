import type { Db } from "./db.js";
import { visibleMemory, type Viewer } from "./visibility.js";

export type MemoryType = "memory" | "doc" | "directive" | "skill" | "compiled";
export type Scope = "agent" | "project";

export interface MemoryRow {
  pk: number;
  id: string;
  type: MemoryType;
  agent_id: string;
  project: string | null;
  scope: Scope;
  content: string;
  content_key: string;
  confidence: number;
  parents: string;
  tags: string;
  headline: string | null;
  created_at: string;
  updated_at: string;
  version: number;
  expires_at: string | null;
  read_count: number;
  distinct_readers: number;
  reinforcement_count: number;
  last_reinforced_at: string | null;
  superseded_by: string | null;
  embedding_model: string | null;
  deleted_at: string | null;
}

export type NewMemoryRow = Omit<
  MemoryRow,
  "pk" | "read_count" | "distinct_readers" | "reinforcement_count" | "last_reinforced_at" | "superseded_by" | "headline" | "deleted_at"
>;

export interface MemoryFilters {
  type?: MemoryType | undefined;
  tag?: string | undefined;
  agent?: string | undefined;
  /** null selects global entries only. */
  project?: string | null | undefined;
  scope?: Scope | undefined;
  confidenceMin?: number | undefined;
  updatedBefore?: string | undefined;
  createdBefore?: string | undefined;
  minVersion?: number | undefined;
  minDistinctReaders?: number | undefined;
}

export interface Keyset {
  at: string;
  pk: number;
}

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
}

/** Visible, live (not deleted, not expired) entries. */
function liveClause(viewer: Viewer, nowIso: string): Clause {
  const visible = visibleMemory("m", viewer);
  return {
    sql: [visible.sql, "m.deleted_at IS NULL", "(m.expires_at IS NULL OR m.expires_at > ?)"],
    params: [...visible.params, nowIso],
  };
}

export function insertMemory(db: Db, row: NewMemoryRow, tags: string[]): number {
  const result = db.run(
    `INSERT INTO memory (id, type, agent_id, project, scope, content, content_key, confidence, parents, tags,
       created_at, updated_at, version, expires_at, embedding_model)
     VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
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
  );
  const pk = Number(result.lastInsertRowid);
  replaceTags(db, pk, tags);
  return pk;
}

export function replaceTags(db: Db, pk: number, tags: string[]): void {
  db.run("DELETE FROM memory_tags WHERE memory_pk = ?", pk);
  for (const tag of tags) db.run("INSERT INTO memory_tags (tag, memory_pk) VALUES (?, ?)", tag, pk);
}

export const memoryByPk = (db: Db, pk: number): MemoryRow | undefined =>
  db.get<MemoryRow>("SELECT * FROM memory WHERE pk = ?", pk);

export function memoryByPks(db: Db, pks: number[]): Map<number, MemoryRow> {
  const rows = db.all<MemoryRow>("SELECT * FROM memory WHERE pk IN (SELECT value FROM json_each(?))", JSON.stringify(pks));
  return new Map(rows.map((row) => [row.pk, row]));
}

/** Live entries visible to `viewer` whose id is `id`, or starts with `prefix` (at most 2 returned). */
export function findLiveMemory(db: Db, viewer: Viewer, nowIso: string, ref: { id: string } | { prefix: string }): MemoryRow[] {
  const live = liveClause(viewer, nowIso);
  const [match, value] = "id" in ref ? ["m.id = ?", ref.id] : ["m.id >= ? AND m.id < ?", ref.prefix];
  const params = "id" in ref ? [value] : [value, `${value}\uffff`];
  return db.all<MemoryRow>(
    `SELECT m.* FROM memory m WHERE ${match} AND ${live.sql.join(" AND ")} LIMIT 2`,
    ...params,
    ...live.params,
  );
}

/** The entry a visible, merged-away entry was merged into (null when it was not merged, or is not visible). */
export function mergedInto(db: Db, viewer: Viewer, id: string): string | null {
  const visible = visibleMemory("m", viewer);
  return (
    db.get<{ superseded_by: string }>(
      `SELECT m.superseded_by FROM memory m WHERE m.id = ? AND m.deleted_at IS NOT NULL AND m.superseded_by IS NOT NULL AND ${visible.sql}`,
      id,
      ...visible.params,
    )?.superseded_by ?? null
  );
}

/** How a listing is ordered: newest change first, or by kind (directives, docs, the rest) and then so. */
export type MemoryOrder = "recent" | "kind";

/** The kind order's rank: directives first, then docs, then everything else. */
export const KIND_RANK = "CASE m.type WHEN 'directive' THEN 0 WHEN 'doc' THEN 1 ELSE 2 END";
export const kindRank = (type: string): number => (type === "directive" ? 0 : type === "doc" ? 1 : 2);

export function listMemory(
  db: Db,
  viewer: Viewer,
  nowIso: string,
  filters: MemoryFilters,
  after: (Keyset & { rank?: number | undefined }) | null,
  limit: number,
  order: MemoryOrder = "recent",
): MemoryRow[] {
  const clause = liveClause(viewer, nowIso);
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

/** Entries changed after `since`, oldest first, deleted ones included (the caller makes tombstones). */
export function memoryDelta(
  db: Db,
  viewer: Viewer,
  since: string,
  filters: Pick<MemoryFilters, "agent" | "project" | "type">,
  after: Keyset | null,
  limit: number,
): MemoryRow[] {
  const visible = visibleMemory("m", viewer);
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

/** Visible directives: global, then project-scoped (by project), then the caller's private ones. */
export function listDirectives(db: Db, viewer: Viewer, nowIso: string, project: string | undefined, limit: number): MemoryRow[] {
  const clause = liveClause(viewer, nowIso);
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

export interface DuplicateKey {
  type: MemoryType;
  project: string | null;
  scope: Scope;
  agentId: string;
  contentKey: string;
}

/** A live entry with the same normalised content, type, project and scope (same author if private). */
export function findExactDuplicate(db: Db, key: DuplicateKey, nowIso: string): MemoryRow | undefined {
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

const PATCHABLE_COLUMNS = [
  "content",
  "content_key",
  "tags",
  "confidence",
  "type",
  "scope",
  "project",
  "expires_at",
  "updated_at",
  "version",
  "embedding_model",
  "headline",
  "last_reinforced_at",
  "reinforcement_count",
  "deleted_at",
  "superseded_by",
] as const;
const PATCHABLE = new Set<string>(PATCHABLE_COLUMNS);

export type MemoryPatch = { [Column in (typeof PATCHABLE_COLUMNS)[number]]?: MemoryRow[Column] | undefined };

export function patchMemory(db: Db, pk: number, patch: MemoryPatch): void {
  const entries = Object.entries(patch).filter(([column, value]) => PATCHABLE.has(column) && value !== undefined);
  if (entries.length === 0) return;
  db.run(
    `UPDATE memory SET ${entries.map(([column]) => `${column} = ?`).join(", ")} WHERE pk = ?`,
    ...entries.map(([, value]) => value),
    pk,
  );
}

export interface ReadRecord {
  pk: number;
  agentId: string;
  at: string;
  context: string | null;
}

/** Counts reads: `read_count` per read, `distinct_readers` once per agent. */
export function recordReads(db: Db, reads: ReadRecord[]): void {
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

export const expiredMemory = (db: Db, nowIso: string, limit: number): MemoryRow[] =>
  db.all<MemoryRow>(
    "SELECT * FROM memory WHERE expires_at IS NOT NULL AND expires_at <= ? AND deleted_at IS NULL ORDER BY expires_at LIMIT ?",
    nowIso,
    limit,
  );

export const unembeddedMemory = (db: Db, limit: number): MemoryRow[] =>
  db.all<MemoryRow>("SELECT * FROM memory WHERE embedding_model IS NULL AND deleted_at IS NULL ORDER BY pk LIMIT ?", limit);

export const liveMemoryAfter = (db: Db, afterPk: number, limit: number): MemoryRow[] =>
  db.all<MemoryRow>("SELECT * FROM memory WHERE deleted_at IS NULL AND pk > ? ORDER BY pk LIMIT ?", afterPk, limit);

/** Keyword search: FTS5 BM25 over content and tags, visibility and filters inside the query. */
export function keywordSearch(
  db: Db,
  viewer: Viewer,
  nowIso: string,
  match: string,
  filters: MemoryFilters,
  limit: number,
): { pk: number; rank: number }[] {
  const clause = liveClause(viewer, nowIso);
  filterClause(filters, clause);
  return db.all<{ pk: number; rank: number }>(
    `SELECT m.pk AS pk, f.rank AS rank FROM memory_fts f JOIN memory m ON m.pk = f.rowid
     WHERE memory_fts MATCH ? AND ${clause.sql.join(" AND ")}
     ORDER BY f.rank LIMIT ?`,
    match,
    ...clause.params,
    limit,
  );
}

/** Which of `ids` name entries (live or deleted) that `viewer` may see. */
export function visibleMemoryIds(db: Db, viewer: Viewer, ids: string[]): Set<string> {
  const visible = visibleMemory("m", viewer);
  const rows = db.all<{ id: string }>(
    `SELECT m.id FROM memory m WHERE m.id IN (SELECT value FROM json_each(?)) AND ${visible.sql}`,
    JSON.stringify(ids),
    ...visible.params,
  );
  return new Set(rows.map((row) => row.id));
}

/** A project's live shared entries (private entries stay their authors'). */
export const liveProjectMemory = (db: Db, project: string): MemoryRow[] =>
  db.all<MemoryRow>("SELECT * FROM memory WHERE project = ? AND scope = 'project' AND deleted_at IS NULL ORDER BY pk", project);

/** Visible entries changed after `since` (null: ever), oldest change first. */
export function changesSince(db: Db, viewer: Viewer, since: string | null, limit: number): MemoryRow[] {
  const visible = visibleMemory("m", viewer);
  return db.all<MemoryRow>(
    `SELECT m.* FROM memory m WHERE ${visible.sql} AND m.updated_at > ? ORDER BY m.updated_at, m.pk LIMIT ?`,
    ...visible.params,
    since ?? "",
    limit,
  );
}

/** Visible entries whose last change has exactly the timestamp `at`. */
export function changesAt(db: Db, viewer: Viewer, at: string, limit: number): MemoryRow[] {
  const visible = visibleMemory("m", viewer);
  return db.all<MemoryRow>(`SELECT m.* FROM memory m WHERE ${visible.sql} AND m.updated_at = ? ORDER BY m.pk LIMIT ?`, ...visible.params, at, limit);
}
