import type { EdgeRel } from "../../wire/graph.js";
import type { DecisionRow } from "../decisions.js";
import { DECISION_COLUMNS } from "./decisions.js";
import type { EdgeRow } from "../graph.js";
import type { MemoryRow } from "../memory.js";
import type { ProjectRow } from "../projects.js";
import type { Reader, Tx } from "../store.js";
import type { ImportedEdge, TaskCommentRow, TaskOutcomeRow, TransferSelection, TransferStore } from "../transfer.js";
import { connectionOf } from "./transactions.js";

interface Clause {
  sql: string[];
  params: unknown[];
}

/** `changed`: the column that says when a row last changed. */
function selectionClause(alias: string, selection: TransferSelection, clause: Clause, changed = "updated_at"): void {
  if (selection.project === null) clause.sql.push(`${alias}.project IS NULL`);
  else if (selection.project !== undefined) {
    clause.sql.push(`${alias}.project = ?`);
    clause.params.push(selection.project);
  }
  if (selection.since !== undefined) {
    clause.sql.push(`${alias}.${changed} > ?`);
    clause.params.push(selection.since);
  }
}

// Private entries are never exported, whoever asks: only their author may ever see them.
const EXPORTABLE_ENTRY = (alias: string): string =>
  `${alias}.scope = 'project' AND ${alias}.deleted_at IS NULL AND (${alias}.expires_at IS NULL OR ${alias}.expires_at > ?)`;

export class PgTransfer implements TransferStore {
  async projects(r: Reader, project: string | null | undefined): Promise<Omit<ProjectRow, "member_count">[]> {
    const db = connectionOf(r);
    if (project === null) return [];
    if (project !== undefined) return db.all<Omit<ProjectRow, "member_count">>("SELECT id, name, description, owner, created_at FROM projects WHERE id = ?", project);
    return db.all<Omit<ProjectRow, "member_count">>("SELECT id, name, description, owner, created_at FROM projects ORDER BY created_at, id");
  }

  async entries(r: Reader, selection: TransferSelection, nowIso: string, afterPk: number, limit: number): Promise<MemoryRow[]> {
    const db = connectionOf(r);
    const clause: Clause = { sql: [EXPORTABLE_ENTRY("m"), "m.pk > ?"], params: [nowIso, afterPk] };
    selectionClause("m", selection, clause);
    return db.all<MemoryRow>(`SELECT m.* FROM memory m WHERE ${clause.sql.join(" AND ")} ORDER BY m.pk LIMIT ?`, ...clause.params, limit);
  }

  async edges(r: Reader, selection: TransferSelection, nowIso: string, afterPk: number, limit: number): Promise<EdgeRow[]> {
    const db = connectionOf(r);
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

  async decisions(r: Reader, selection: TransferSelection, afterPk: number, limit: number): Promise<DecisionRow[]> {
    const db = connectionOf(r);
    const clause: Clause = { sql: ["d.pk > ?"], params: [afterPk] };
    selectionClause("d", selection, clause, "created_at");
    return db.all<DecisionRow>(`SELECT ${DECISION_COLUMNS} FROM decisions d WHERE ${clause.sql.join(" AND ")} ORDER BY d.pk LIMIT ?`, ...clause.params, limit);
  }

  // The dependencies in primary-key order, as SQLite's WITHOUT ROWID table gives them.
  async taskGraph(r: Reader, selection: TransferSelection): Promise<{ pk: number; dependsOn: number[] }[]> {
    const db = connectionOf(r);
    const clause: Clause = { sql: ["1 = 1"], params: [] };
    selectionClause("t", selection, clause);
    const rows = await db.all<{ pk: number; depends_on: string }>(
      `SELECT t.pk,
       COALESCE((SELECT json_agg(d.depends_on_pk ORDER BY d.depends_on_pk) FROM task_dependencies d WHERE d.task_pk = t.pk)::text, '[]') AS depends_on
     FROM tasks t WHERE ${clause.sql.join(" AND ")} ORDER BY t.created_at, t.pk`,
      ...clause.params,
    );
    return rows.map((row) => ({ pk: row.pk, dependsOn: JSON.parse(row.depends_on) as number[] }));
  }

  async commentsOf(r: Reader, taskPks: number[]): Promise<TaskCommentRow[]> {
    const db = connectionOf(r);
    return db.all<TaskCommentRow>(
      "SELECT task_pk, id, agent_id, kind, comment, created_at FROM task_comments WHERE task_pk = ANY(?::bigint[]) ORDER BY task_pk, pk",
      taskPks,
    );
  }

  // The outcomes are what performance and recommendations learn from.
  async outcomesOf(r: Reader, taskPks: number[]): Promise<TaskOutcomeRow[]> {
    const db = connectionOf(r);
    return db.all<TaskOutcomeRow>(
      "SELECT task_pk, agent_id, outcome, tags, claimed_at, finished_at FROM task_outcomes WHERE task_pk = ANY(?::bigint[]) ORDER BY task_pk, pk",
      taskPks,
    );
  }

  async memoryIdTaken(r: Reader, id: string): Promise<boolean> {
    const db = connectionOf(r);
    return (await db.get("SELECT 1 FROM memory WHERE id = ?", id)) !== undefined;
  }

  // Whoever may see it: the import checks what it needs itself.
  async liveMemoryById(r: Reader, id: string, nowIso: string): Promise<MemoryRow | undefined> {
    const db = connectionOf(r);
    return db.get<MemoryRow>("SELECT * FROM memory WHERE id = ? AND deleted_at IS NULL AND (expires_at IS NULL OR expires_at > ?)", id, nowIso);
  }

  async restoreReadCounts(tx: Tx, pk: number, readCount: number, distinctReaders: number): Promise<void> {
    const db = connectionOf(tx);
    await db.run("UPDATE memory SET read_count = ?, distinct_readers = ? WHERE pk = ?", readCount, distinctReaders, pk);
  }

  async edgeIdTaken(r: Reader, id: string): Promise<boolean> {
    const db = connectionOf(r);
    return (await db.get("SELECT 1 FROM graph_edges WHERE id = ?", id)) !== undefined;
  }

  async edgeBetween(r: Reader, srcPk: number, dstPk: number, rel: EdgeRel): Promise<{ pk: number; id: string; note: string | null } | undefined> {
    const db = connectionOf(r);
    return db.get<{ pk: number; id: string; note: string | null }>("SELECT pk, id, note FROM graph_edges WHERE src_pk = ? AND dst_pk = ? AND rel = ?", srcPk, dstPk, rel);
  }

  /** Inserts an edge with its own id and times (an import keeps another instance's); returns its row key. */
  async insertEdge(tx: Tx, edge: ImportedEdge): Promise<number> {
    const db = connectionOf(tx);
    const result = await db.run(
      `INSERT INTO graph_edges (id, src_pk, dst_pk, rel, note, project, agent_id, created_at, updated_at)
     VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)
     RETURNING pk`,
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
    return Number(result.rows[0]?.pk);
  }

  async setEdgeNote(tx: Tx, pk: number, note: string, at: string): Promise<void> {
    const db = connectionOf(tx);
    await db.run("UPDATE graph_edges SET note = ?, updated_at = ? WHERE pk = ?", note, at, pk);
  }

  async taskIdTaken(r: Reader, id: string): Promise<boolean> {
    const db = connectionOf(r);
    return (await db.get("SELECT 1 FROM tasks WHERE id = ?", id)) !== undefined;
  }

  async taskPkById(r: Reader, id: string): Promise<number | undefined> {
    const db = connectionOf(r);
    return (await db.get<{ pk: number }>("SELECT pk FROM tasks WHERE id = ?", id))?.pk;
  }
}
