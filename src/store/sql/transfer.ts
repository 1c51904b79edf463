import type { EdgeRel } from "../../wire/graph.js";
import type { BlueprintRow } from "../blueprints.js";
import type { RunRow } from "../blueprint-runs.js";
import type { AnchorRow } from "../compile.js";
import type { DecisionRow } from "../decisions.js";
import type { HandoffRow } from "../handoffs.js";
import type { EdgeRow } from "../graph.js";
import type { MemoryRow } from "../memory.js";
import type { ProjectRow } from "../projects.js";
import type { Reader, Tx } from "../store.js";
import type {
  ImportedEdge,
  MemberOfProject,
  RecipientRow,
  TaskCommentRow,
  TaskOutcomeRow,
  TransferAgentRow,
  TransferMessageRow,
  TransferRunNodeRow,
  TransferSelection,
  TransferStore,
} from "../transfer.js";
import { BLUEPRINT_COLUMNS, toBlueprintRow } from "./blueprints.js";
import { RUN_COLUMNS, RUN_FROM, toRun } from "./blueprint-runs.js";
import { ANCHOR_COLUMNS, toAnchor } from "./compile.js";
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

/** Agents and handoffs belong to no project: they go with everything, or with the global records. */
function globalClause(alias: string, selection: TransferSelection, clause: Clause, changed: string): boolean {
  if (typeof selection.project === "string") return false;
  if (selection.since !== undefined) {
    clause.sql.push(`${alias}.${changed} > ?`);
    clause.params.push(selection.since);
  }
  return true;
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

  membersOf(r: Reader, projectIds: string[]): Promise<MemberOfProject[]> {
    if (projectIds.length === 0) return Promise.resolve([]);
    const listed = this.db.dialect.inList("project_id", projectIds);
    return this.db.all<MemberOfProject>(r, `SELECT project_id, agent_id, joined_at FROM project_members WHERE ${listed.sql} ORDER BY project_id, joined_at, agent_id`, ...listed.params);
  }

  agents(r: Reader, selection: TransferSelection, afterId: string, limit: number): Promise<TransferAgentRow[]> {
    const clause: Clause = { sql: ["a.agent_id > ?"], params: [afterId] };
    if (!globalClause("a", selection, clause, "created_at")) return Promise.resolve([]);
    return this.db.all<TransferAgentRow>(
      r,
      `SELECT a.agent_id, a.display_name, a.role, a.created_at, a.last_seen_at, a.current_project, a.deleted_at FROM agents a
        WHERE ${clause.sql.join(" AND ")} ORDER BY a.agent_id LIMIT ?`,
      ...clause.params,
      limit,
    );
  }

  async anchorsOf(r: Reader, memoryPks: number[]): Promise<AnchorRow[]> {
    if (memoryPks.length === 0) return [];
    const listed = this.db.dialect.inKeys("a.memory_pk", memoryPks);
    return (await this.db.all<AnchorRow>(r, `SELECT ${ANCHOR_COLUMNS} FROM compile_anchors a WHERE ${listed.sql}`, ...listed.params)).map(toAnchor);
  }

  async blueprints(r: Reader, selection: TransferSelection, afterPk: number, limit: number): Promise<BlueprintRow[]> {
    const clause: Clause = { sql: ["b.pk > ?"], params: [afterPk] };
    selectionClause("b", selection, clause, "created_at");
    const rows = await this.db.all<BlueprintRow>(r, `SELECT ${BLUEPRINT_COLUMNS} FROM blueprints b WHERE ${clause.sql.join(" AND ")} ORDER BY b.pk LIMIT ?`, ...clause.params, limit);
    return rows.map(toBlueprintRow);
  }

  async runs(r: Reader, selection: TransferSelection, afterPk: number, limit: number): Promise<RunRow[]> {
    const clause: Clause = { sql: ["r.pk > ?"], params: [afterPk] };
    selectionClause("r", selection, clause);
    const rows = await this.db.all<RunRow>(r, `SELECT ${RUN_COLUMNS} FROM ${RUN_FROM} WHERE ${clause.sql.join(" AND ")} ORDER BY r.pk LIMIT ?`, ...clause.params, limit);
    return rows.map(toRun);
  }

  async runNodesOf(r: Reader, runPks: number[]): Promise<TransferRunNodeRow[]> {
    if (runPks.length === 0) return [];
    const listed = this.db.dialect.inKeys("n.run_pk", runPks);
    const rows = await this.db.all<TransferRunNodeRow>(
      r,
      `SELECT n.pk, n.run_pk, n.node_id, n.key, n.task_pk, n.state, n.item, n.item_index, n.attempt, n.anchors, n.gate_task_pk,
              t.id AS task_id, g.id AS gate_task_id
         FROM blueprint_run_nodes n LEFT JOIN tasks t ON t.pk = n.task_pk LEFT JOIN tasks g ON g.pk = n.gate_task_pk
        WHERE ${listed.sql} ORDER BY n.run_pk, n.pk`,
      ...listed.params,
    );
    return rows.map((row) => ({
      ...row,
      pk: Number(row.pk),
      run_pk: Number(row.run_pk),
      task_pk: row.task_pk === null ? null : Number(row.task_pk),
      item_index: row.item_index === null ? null : Number(row.item_index),
      attempt: Number(row.attempt),
      gate_task_pk: row.gate_task_pk === null ? null : Number(row.gate_task_pk),
    }));
  }

  async messages(r: Reader, selection: TransferSelection, afterPk: number, limit: number): Promise<TransferMessageRow[]> {
    const clause: Clause = { sql: ["m.pk > ?"], params: [afterPk] };
    selectionClause("m", selection, clause, "created_at");
    const rows = await this.db.all<TransferMessageRow>(
      r,
      `SELECT m.pk, m.id, m.sender, m.recipient, m.project, m.subject, m.body, m.reply_to, m.created_at FROM messages m
        WHERE ${clause.sql.join(" AND ")} ORDER BY m.pk LIMIT ?`,
      ...clause.params,
      limit,
    );
    return rows.map((row) => ({ ...row, pk: Number(row.pk) }));
  }

  async recipientsOf(r: Reader, messagePks: number[]): Promise<RecipientRow[]> {
    if (messagePks.length === 0) return [];
    const listed = this.db.dialect.inKeys("message_pk", messagePks);
    const rows = await this.db.all<RecipientRow>(r, `SELECT message_pk, agent_id, read_at FROM message_recipients WHERE ${listed.sql} ORDER BY message_pk, agent_id`, ...listed.params);
    return rows.map((row) => ({ ...row, message_pk: Number(row.message_pk) }));
  }

  async handoffs(r: Reader, selection: TransferSelection, afterPk: number, limit: number): Promise<(HandoffRow & { pk: number })[]> {
    const clause: Clause = { sql: ["h.pk > ?"], params: [afterPk] };
    if (!globalClause("h", selection, clause, "created_at")) return [];
    const rows = await this.db.all<HandoffRow & { pk: number }>(
      r,
      `SELECT h.pk, h.id, h.agent_id, h.host, h.summary, h.in_progress, h.next_steps, h.memory_refs, h.created_at FROM handoffs h
        WHERE ${clause.sql.join(" AND ")} ORDER BY h.pk LIMIT ?`,
      ...clause.params,
      limit,
    );
    return rows.map((row) => ({ ...row, pk: Number(row.pk) }));
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
    const row = await this.db.get<{ pk: number }>(r, "SELECT pk FROM tasks WHERE id = ?", id);
    return row === undefined ? undefined : Number(row.pk);
  }

  async insertAgent(tx: Tx, agent: TransferAgentRow): Promise<void> {
    // No key: nobody can act as it until an owner gives it one (key_source 'generated' lets them).
    await this.db.run(
      tx,
      `INSERT INTO agents (agent_id, display_name, role, key_hash, key_source, created_at, last_seen_at, current_project, deleted_at)
       VALUES (?, ?, ?, NULL, 'generated', ?, ?, ?, ?)`,
      agent.agent_id,
      agent.display_name,
      agent.role,
      agent.created_at,
      agent.last_seen_at,
      agent.current_project,
      agent.deleted_at,
    );
  }

  async blueprintPkById(r: Reader, id: string): Promise<number | undefined> {
    const row = await this.db.get<{ pk: number }>(r, "SELECT pk FROM blueprints WHERE id = ?", id);
    return row === undefined ? undefined : Number(row.pk);
  }

  async blueprintVersionTaken(r: Reader, project: string | null, name: string, version: number): Promise<boolean> {
    return (await this.db.get(r, "SELECT 1 FROM blueprints WHERE project_key = ? AND name = ? AND version = ?", project ?? "", name, version)) !== undefined;
  }

  async runIdTaken(r: Reader, id: string): Promise<boolean> {
    return (await this.db.get(r, "SELECT 1 FROM blueprint_runs WHERE id = ?", id)) !== undefined;
  }

  async messageIdTaken(r: Reader, id: string): Promise<boolean> {
    return (await this.db.get(r, "SELECT 1 FROM messages WHERE id = ?", id)) !== undefined;
  }

  async insertRecipients(tx: Tx, messagePk: number, recipients: { agent_id: string; read_at: string | null }[]): Promise<void> {
    for (const recipient of recipients) {
      await this.db.run(tx, "INSERT INTO message_recipients (message_pk, agent_id, read_at) VALUES (?, ?, ?)", messagePk, recipient.agent_id, recipient.read_at);
    }
  }

  async handoffIdTaken(r: Reader, id: string): Promise<boolean> {
    return (await this.db.get(r, "SELECT 1 FROM handoffs WHERE id = ?", id)) !== undefined;
  }
}
