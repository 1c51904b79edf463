import type { EdgeRel } from "../../wire/graph.js";
import type { DecisionRow } from "../decisions.js";
import type { EdgeRow } from "../graph.js";
import type { MemoryRow } from "../memory.js";
import type { ProjectRow } from "../projects.js";
import type { Reader, Tx } from "../store.js";
import type { ImportedEdge, TaskCommentRow, TaskOutcomeRow, TransferSelection, TransferStore } from "../transfer.js";
import { DECISION_COLUMNS } from "./decisions.js";
import type { SqlDb } from "./dialect.js";
import { insertEdge } from "./graph.js";
import { MEMORY_COLUMNS } from "./memory.js";

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

export class SqlTransfer implements TransferStore {
  constructor(private readonly db: SqlDb) {}

  projects(r: Reader, project: string | null | undefined): Promise<Omit<ProjectRow, "member_count">[]> {
    if (project === null) return Promise.resolve([]);
    if (project !== undefined) return this.db.all<Omit<ProjectRow, "member_count">>(r, "SELECT id, name, description, owner, created_at FROM projects WHERE id = ?", project);
    return this.db.all<Omit<ProjectRow, "member_count">>(r, "SELECT id, name, description, owner, created_at FROM projects ORDER BY created_at, id");
  }

  entries(r: Reader, selection: TransferSelection, nowIso: string, afterPk: number, limit: number): Promise<MemoryRow[]> {
    const clause: Clause = { sql: [EXPORTABLE_ENTRY("m"), "m.pk > ?"], params: [nowIso, afterPk] };
    selectionClause("m", selection, clause);
    return this.db.all<MemoryRow>(r, `SELECT ${MEMORY_COLUMNS} FROM memory m WHERE ${clause.sql.join(" AND ")} ORDER BY m.pk LIMIT ?`, ...clause.params, limit);
  }

  edges(r: Reader, selection: TransferSelection, nowIso: string, afterPk: number, limit: number): Promise<EdgeRow[]> {
    const clause: Clause = { sql: [EXPORTABLE_ENTRY("s"), EXPORTABLE_ENTRY("d"), "e.pk > ?"], params: [nowIso, nowIso, afterPk] };
    selectionClause("e", selection, clause);
    return this.db.all<EdgeRow>(
      r,
      `SELECT e.pk, e.id, s.id AS src, d.id AS dst, e.rel, e.note, e.project, e.agent_id, e.created_at, e.updated_at
     FROM graph_edges e JOIN memory s ON s.pk = e.src_pk JOIN memory d ON d.pk = e.dst_pk
     WHERE ${clause.sql.join(" AND ")} ORDER BY e.pk LIMIT ?`,
      ...clause.params,
      limit,
    );
  }

  decisions(r: Reader, selection: TransferSelection, afterPk: number, limit: number): Promise<DecisionRow[]> {
    const clause: Clause = { sql: ["d.pk > ?"], params: [afterPk] };
    selectionClause("d", selection, clause, "created_at");
    return this.db.all<DecisionRow>(r, `SELECT ${DECISION_COLUMNS} FROM decisions d WHERE ${clause.sql.join(" AND ")} ORDER BY d.pk LIMIT ?`, ...clause.params, limit);
  }

  // The dependencies in primary-key order, as SQLite's WITHOUT ROWID table holds them.
  async taskGraph(r: Reader, selection: TransferSelection): Promise<{ pk: number; dependsOn: number[] }[]> {
    const clause: Clause = { sql: ["1 = 1"], params: [] };
    selectionClause("t", selection, clause);
    const rows = await this.db.all<{ pk: number; depends_on: string }>(
      r,
      `SELECT t.pk, (SELECT ${this.db.dialect.jsonArray("d.depends_on_pk", "d.depends_on_pk")} FROM task_dependencies d WHERE d.task_pk = t.pk) AS depends_on
     FROM tasks t WHERE ${clause.sql.join(" AND ")} ORDER BY t.created_at, t.pk`,
      ...clause.params,
    );
    return rows.map((row) => ({ pk: row.pk, dependsOn: JSON.parse(row.depends_on) as number[] }));
  }

  commentsOf(r: Reader, taskPks: number[]): Promise<TaskCommentRow[]> {
    const listed = this.db.dialect.inKeys("task_pk", taskPks);
    return this.db.all<TaskCommentRow>(r, `SELECT task_pk, id, agent_id, kind, comment, created_at FROM task_comments WHERE ${listed.sql} ORDER BY task_pk, pk`, ...listed.params);
  }

  // The outcomes are what performance and recommendations learn from.
  outcomesOf(r: Reader, taskPks: number[]): Promise<TaskOutcomeRow[]> {
    const listed = this.db.dialect.inKeys("task_pk", taskPks);
    return this.db.all<TaskOutcomeRow>(
      r,
      `SELECT task_pk, agent_id, outcome, tags, claimed_at, finished_at FROM task_outcomes WHERE ${listed.sql} ORDER BY task_pk, pk`,
      ...listed.params,
    );
  }

  async memoryIdTaken(r: Reader, id: string): Promise<boolean> {
    return (await this.db.get(r, "SELECT 1 FROM memory WHERE id = ?", id)) !== undefined;
  }

  // Whoever may see it: the import checks what it needs itself.
  liveMemoryById(r: Reader, id: string, nowIso: string): Promise<MemoryRow | undefined> {
    return this.db.get<MemoryRow>(r, `SELECT ${MEMORY_COLUMNS} FROM memory m WHERE m.id = ? AND m.deleted_at IS NULL AND (m.expires_at IS NULL OR m.expires_at > ?)`, id, nowIso);
  }

  async restoreReadCounts(tx: Tx, pk: number, readCount: number, distinctReaders: number): Promise<void> {
    await this.db.run(tx, "UPDATE memory SET read_count = ?, distinct_readers = ? WHERE pk = ?", readCount, distinctReaders, pk);
  }

  async edgeIdTaken(r: Reader, id: string): Promise<boolean> {
    return (await this.db.get(r, "SELECT 1 FROM graph_edges WHERE id = ?", id)) !== undefined;
  }

  edgeBetween(r: Reader, srcPk: number, dstPk: number, rel: EdgeRel): Promise<{ pk: number; id: string; note: string | null } | undefined> {
    return this.db.get<{ pk: number; id: string; note: string | null }>(r, "SELECT pk, id, note FROM graph_edges WHERE src_pk = ? AND dst_pk = ? AND rel = ?", srcPk, dstPk, rel);
  }

  insertEdge(tx: Tx, edge: ImportedEdge): Promise<number> {
    return insertEdge(this.db, tx, edge);
  }

  async setEdgeNote(tx: Tx, pk: number, note: string, at: string): Promise<void> {
    await this.db.run(tx, "UPDATE graph_edges SET note = ?, updated_at = ? WHERE pk = ?", note, at, pk);
  }

  async taskIdTaken(r: Reader, id: string): Promise<boolean> {
    return (await this.db.get(r, "SELECT 1 FROM tasks WHERE id = ?", id)) !== undefined;
  }

  async taskPkById(r: Reader, id: string): Promise<number | undefined> {
    return (await this.db.get<{ pk: number }>(r, "SELECT pk FROM tasks WHERE id = ?", id))?.pk;
  }
}
