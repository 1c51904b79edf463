import type { Db } from "./db.js";
import type { EdgeRel, EdgeRow } from "./graph.js";
import type { MemoryRow } from "./memory.js";
import type { ProjectRow } from "./projects.js";
import type { CommentRow } from "./tasks.js";

/**
 * What an export selects: `project` undefined is everything, null the global rows only, an id that
 * project's rows only; `since` keeps rows changed after it.
 */
export interface TransferSelection {
  project?: string | null | undefined;
  since?: string | undefined;
}

interface Clause {
  sql: string[];
  params: unknown[];
}

function selectionClause(alias: string, selection: TransferSelection, clause: Clause): void {
  if (selection.project === null) clause.sql.push(`${alias}.project IS NULL`);
  else if (selection.project !== undefined) {
    clause.sql.push(`${alias}.project = ?`);
    clause.params.push(selection.project);
  }
  if (selection.since !== undefined) {
    clause.sql.push(`${alias}.updated_at > ?`);
    clause.params.push(selection.since);
  }
}

// Private entries are never exported, whoever asks: only their author may ever see them.
const EXPORTABLE_ENTRY = (alias: string): string =>
  `${alias}.scope = 'project' AND ${alias}.deleted_at IS NULL AND (${alias}.expires_at IS NULL OR ${alias}.expires_at > ?)`;

export function exportableProjects(db: Db, project: string | null | undefined): Omit<ProjectRow, "member_count">[] {
  if (project === null) return [];
  if (project !== undefined) return db.all<Omit<ProjectRow, "member_count">>("SELECT id, name, description, owner, created_at FROM projects WHERE id = ?", project);
  return db.all<Omit<ProjectRow, "member_count">>("SELECT id, name, description, owner, created_at FROM projects ORDER BY created_at, id");
}

/** Live shared entries of the selection after row key `afterPk`, in row order. */
export function exportableEntries(db: Db, selection: TransferSelection, nowIso: string, afterPk: number, limit: number): MemoryRow[] {
  const clause: Clause = { sql: [EXPORTABLE_ENTRY("m"), "m.pk > ?"], params: [nowIso, afterPk] };
  selectionClause("m", selection, clause);
  return db.all<MemoryRow>(`SELECT m.* FROM memory m WHERE ${clause.sql.join(" AND ")} ORDER BY m.pk LIMIT ?`, ...clause.params, limit);
}

/** Edges of the selection whose both ends are exportable entries, after row key `afterPk`. */
export function exportableEdges(db: Db, selection: TransferSelection, nowIso: string, afterPk: number, limit: number): EdgeRow[] {
  const clause: Clause = { sql: [EXPORTABLE_ENTRY("s"), EXPORTABLE_ENTRY("d"), "e.pk > ?"], params: [nowIso, nowIso, afterPk] };
  selectionClause("e", selection, clause);
  return db.all<EdgeRow>(
    `SELECT e.pk, e.id, s.id AS src, d.id AS dst, e.rel, e.note, e.project, e.agent_id, e.created_at, e.updated_at
     FROM graph_edges e JOIN memory s ON s.pk = e.src_pk JOIN memory d ON d.pk = e.dst_pk
     WHERE ${clause.sql.join(" AND ")} ORDER BY e.pk LIMIT ?`,
    ...clause.params,
    limit,
  );
}

/** The selection's tasks (row keys, oldest first) with the row keys of the tasks each depends on. */
export function exportableTaskGraph(db: Db, selection: TransferSelection): { pk: number; dependsOn: number[] }[] {
  const clause: Clause = { sql: ["1 = 1"], params: [] };
  selectionClause("t", selection, clause);
  const rows = db.all<{ pk: number; depends_on: string }>(
    `SELECT t.pk, (SELECT json_group_array(d.depends_on_pk) FROM task_dependencies d WHERE d.task_pk = t.pk) AS depends_on
     FROM tasks t WHERE ${clause.sql.join(" AND ")} ORDER BY t.created_at, t.pk`,
    ...clause.params,
  );
  return rows.map((row) => ({ pk: row.pk, dependsOn: JSON.parse(row.depends_on) as number[] }));
}

export type TaskCommentRow = Omit<CommentRow, "task_id"> & { task_pk: number };

/** The comment logs of several tasks, each in order. */
export const commentsOfTasks = (db: Db, taskPks: number[]): TaskCommentRow[] =>
  db.all<TaskCommentRow>(
    "SELECT task_pk, id, agent_id, kind, comment, created_at FROM task_comments WHERE task_pk IN (SELECT value FROM json_each(?)) ORDER BY task_pk, pk",
    JSON.stringify(taskPks),
  );

export interface TaskOutcomeRow {
  task_pk: number;
  agent_id: string;
  outcome: "completed" | "failed";
  tags: string;
  claimed_at: string;
  finished_at: string;
}

/** The recorded outcomes (what performance and recommendations learn from) of several tasks. */
export const outcomesOfTasks = (db: Db, taskPks: number[]): TaskOutcomeRow[] =>
  db.all<TaskOutcomeRow>(
    "SELECT task_pk, agent_id, outcome, tags, claimed_at, finished_at FROM task_outcomes WHERE task_pk IN (SELECT value FROM json_each(?)) ORDER BY task_pk, pk",
    JSON.stringify(taskPks),
  );

/** Whether a memory entry with this id was ever stored here, deleted ones included: its id is taken. */
export const memoryIdTaken = (db: Db, id: string): boolean => db.get("SELECT 1 FROM memory WHERE id = ?", id) !== undefined;

/** A live entry by exact id, whoever may see it (the import checks what it needs itself). */
export const liveMemoryById = (db: Db, id: string, nowIso: string): MemoryRow | undefined =>
  db.get<MemoryRow>("SELECT * FROM memory WHERE id = ? AND deleted_at IS NULL AND (expires_at IS NULL OR expires_at > ?)", id, nowIso);

/** Read statistics carried over from another instance (the readers themselves are not). */
export function restoreReadCounts(db: Db, pk: number, readCount: number, distinctReaders: number): void {
  db.run("UPDATE memory SET read_count = ?, distinct_readers = ? WHERE pk = ?", readCount, distinctReaders, pk);
}

export const edgeIdTaken = (db: Db, id: string): boolean => db.get("SELECT 1 FROM graph_edges WHERE id = ?", id) !== undefined;

export const edgeBetween = (db: Db, srcPk: number, dstPk: number, rel: EdgeRel): { pk: number; id: string; note: string | null } | undefined =>
  db.get<{ pk: number; id: string; note: string | null }>("SELECT pk, id, note FROM graph_edges WHERE src_pk = ? AND dst_pk = ? AND rel = ?", srcPk, dstPk, rel);

export interface ImportedEdge {
  id: string;
  srcPk: number;
  dstPk: number;
  rel: EdgeRel;
  note: string | null;
  project: string | null;
  agentId: string;
  createdAt: string;
  updatedAt: string;
}

/** Inserts an edge with its own id and times; returns its row key. */
export function insertImportedEdge(db: Db, edge: ImportedEdge): number {
  const result = db.run(
    `INSERT INTO graph_edges (id, src_pk, dst_pk, rel, note, project, agent_id, created_at, updated_at)
     VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)`,
    edge.id,
    edge.srcPk,
    edge.dstPk,
    edge.rel,
    edge.note,
    edge.project,
    edge.agentId,
    edge.createdAt,
    edge.updatedAt,
  );
  return Number(result.lastInsertRowid);
}

export function setEdgeNote(db: Db, pk: number, note: string, at: string): void {
  db.run("UPDATE graph_edges SET note = ?, updated_at = ? WHERE pk = ?", note, at, pk);
}

export const taskIdTaken = (db: Db, id: string): boolean => db.get("SELECT 1 FROM tasks WHERE id = ?", id) !== undefined;

export const taskPkById = (db: Db, id: string): number | undefined => db.get<{ pk: number }>("SELECT pk FROM tasks WHERE id = ?", id)?.pk;

/**
 * Runs `fn` inside a savepoint of the current transaction, rolled back alone when it throws. Only
 * for a transaction that is itself rolled back at the end (a dry run): hooks registered inside
 * are not separated from the rest.
 */
export function inSavepoint<T>(db: Db, fn: () => T): T {
  db.run("SAVEPOINT transfer_line");
  try {
    const result = fn();
    db.run("RELEASE transfer_line");
    return result;
  } catch (error) {
    db.run("ROLLBACK TO transfer_line");
    db.run("RELEASE transfer_line");
    throw error;
  }
}
