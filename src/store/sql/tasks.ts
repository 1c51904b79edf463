import type { IdRef } from "../../core/ids.js";
import type { Reader, Tx } from "../store.js";
import {
  TASK_PATCHABLE_COLUMNS,
  type CommentRow,
  type NewOutcomeRow,
  type NewTaskRow,
  type OutcomeRow,
  type RecommendedRow,
  type TaskCountsRow,
  type TaskFilters,
  type TaskPatch,
  type TaskRow,
  type TaskStore,
} from "../tasks.js";
import type { TaskStatus } from "../../wire/tasks.js";
import type { Viewpoint } from "../visibility.js";
import type { SqlDb, SqlDialect } from "./dialect.js";
import { idMatch, visibleInProject } from "./visibility.js";

// Every read of a task computes its dependencies (their ids in depends_on_pk order, as SQLite's
// walk of its (task_pk, depends_on_pk) key gives them) and whether one of them is still unfinished.
const taskColumns = (dialect: SqlDialect): string => `t.*,
  (SELECT ${dialect.jsonArray("dt.id", "d.depends_on_pk")} FROM task_dependencies d JOIN tasks dt ON dt.pk = d.depends_on_pk WHERE d.task_pk = t.pk) AS depends_on,
  CAST((EXISTS (SELECT 1 FROM task_dependencies d JOIN tasks dt ON dt.pk = d.depends_on_pk WHERE d.task_pk = t.pk AND dt.status != 'completed')) AS INTEGER) AS blocked`;

const TASK_PATCHABLE = new Set<string>(TASK_PATCHABLE_COLUMNS);

const UNBLOCKED = `t.status = 'open' AND NOT EXISTS (SELECT 1 FROM task_dependencies d JOIN tasks dt ON dt.pk = d.depends_on_pk
  WHERE d.task_pk = t.pk AND dt.status != 'completed')`;

/** The WHERE clause of a task listing or count: visibility, then each filter given. */
function taskWhere(viewpoint: Viewpoint, filters: TaskFilters): { where: string[]; params: unknown[] } {
  const visible = visibleInProject("t", viewpoint);
  const where = [visible.sql];
  const params: unknown[] = [...visible.params];
  const add = (sql: string, ...values: unknown[]): void => {
    where.push(sql);
    params.push(...values);
  };
  if (filters.status !== undefined) add("t.status = ?", filters.status);
  if (filters.agent !== undefined) add("(t.created_by = ? OR t.assigned_to = ?)", filters.agent, filters.agent);
  if (filters.project === null) add("t.project IS NULL");
  else if (filters.project !== undefined) add("t.project = ?", filters.project);
  if (filters.tag !== undefined) add("t.pk IN (SELECT task_pk FROM task_tags WHERE tag = ?)", filters.tag);
  if (filters.priority !== undefined) add("t.priority = ?", filters.priority);
  if (filters.run_id !== undefined) add("t.run_id = ?", filters.run_id);
  if (filters.node_key !== undefined) add("t.node_key = ?", filters.node_key);
  if (filters.unblocked) add(UNBLOCKED);
  return { where, params };
}

export class SqlTasks implements TaskStore {
  private readonly columns: string;

  constructor(private readonly db: SqlDb) {
    this.columns = taskColumns(db.dialect);
  }

  async insert(tx: Tx, row: NewTaskRow, tags: string[], dependsOnPks: number[]): Promise<number> {
    const [inserted] = await this.db.all<{ pk: unknown }>(
      tx,
      `INSERT INTO tasks (id, title, description, status, created_by, assigned_to, reserved, project, priority, tags, due_at,
       expected_outcome, result, created_at, updated_at, claimed_at, completed_at, lease_expires_at, run_id, node_key, gate)
     VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?) RETURNING pk`,
      row.id,
      row.title,
      row.description,
      row.status,
      row.created_by,
      row.assigned_to,
      row.reserved,
      row.project,
      row.priority,
      row.tags,
      row.due_at,
      row.expected_outcome,
      row.result,
      row.created_at,
      row.updated_at,
      row.claimed_at,
      row.completed_at,
      row.lease_expires_at,
      row.run_id,
      row.node_key,
      row.gate,
    );
    const pk = Number(inserted?.pk);
    await this.insertTags(tx, pk, tags);
    for (const dependency of dependsOnPks) await this.addDependency(tx, pk, dependency);
    return pk;
  }

  async replaceTags(tx: Tx, pk: number, tags: string[]): Promise<void> {
    await this.db.run(tx, "DELETE FROM task_tags WHERE task_pk = ?", pk);
    await this.insertTags(tx, pk, tags);
  }

  /** All of a task's tags in one statement. */
  private async insertTags(tx: Tx, pk: number, tags: string[]): Promise<void> {
    if (tags.length === 0) return;
    const rows = this.db.dialect.listRows(tags, "v");
    await this.db.run(tx, `INSERT INTO task_tags (tag, task_pk) SELECT v.value, CAST(? AS BIGINT) FROM ${rows.sql}`, pk, ...rows.params);
  }

  async byPk(r: Reader, pk: number): Promise<TaskRow | undefined> {
    return (await this.lockedRead(r, "t.pk = ?", [pk]))[0];
  }

  async byPks(r: Reader, pks: number[]): Promise<Map<number, TaskRow>> {
    if (pks.length === 0) return new Map();
    const listed = this.db.dialect.inKeys("t.pk", pks);
    const rows = await this.db.all<TaskRow>(r, `SELECT ${this.columns} FROM tasks t WHERE ${listed.sql}`, ...listed.params);
    return new Map(rows.map((row) => [row.pk, row]));
  }

  findVisible(r: Reader, viewpoint: Viewpoint, match: IdRef): Promise<TaskRow[]> {
    const visible = visibleInProject("t", viewpoint);
    const id = idMatch("t.id", match);
    return this.lockedRead(r, `${id.sql} AND ${visible.sql}`, [...id.params, ...visible.params]);
  }

  /**
   * Up to two tasks matching `where`. In a transaction where rows are locked (PostgreSQL), the rows
   * are locked by one statement and read by the next: a statement that waited for a lock sees the
   * locked row as it now is, but its subqueries (`blocked`, `depends_on`) still see the database
   * as it was when the statement began, before the dependency that the other transaction added.
   */
  private async lockedRead(r: Reader, where: string, params: unknown[]): Promise<TaskRow[]> {
    const lock = this.db.dialect.lockRows(r, "t");
    if (lock === "") return this.db.all<TaskRow>(r, `SELECT ${this.columns} FROM tasks t WHERE ${where} LIMIT 2`, ...params);
    const locked = await this.db.all<{ pk: number }>(r, `SELECT t.pk FROM tasks t WHERE ${where} LIMIT 2${lock}`, ...params);
    if (locked.length === 0) return [];
    const pks = this.db.dialect.inKeys("t.pk", locked.map((row) => row.pk));
    return this.db.all<TaskRow>(r, `SELECT ${this.columns} FROM tasks t WHERE ${pks.sql}`, ...pks.params);
  }

  /**
   * With `expectedStatus`, a conditional UPDATE: of servers racing to move the same task out of
   * that status, the row lock lets one through and the others re-check the status after it
   * commits, find it changed and touch nothing.
   */
  async patch(tx: Tx, pk: number, patch: TaskPatch, expectedStatus?: TaskStatus): Promise<boolean> {
    const entries = Object.entries(patch).filter(([column, value]) => TASK_PATCHABLE.has(column) && value !== undefined);
    if (entries.length === 0) return true;
    const guard = expectedStatus === undefined ? "" : " AND status = ?";
    const changed = await this.db.run(
      tx,
      `UPDATE tasks SET ${entries.map(([column]) => `${column} = ?`).join(", ")} WHERE pk = ?${guard}`,
      ...entries.map(([, value]) => value),
      pk,
      ...(expectedStatus === undefined ? [] : [expectedStatus]),
    );
    return changed > 0;
  }

  /** Counts every status in one scan. */
  async count(r: Reader, viewpoint: Viewpoint, filters: Omit<TaskFilters, "status" | "unblocked">): Promise<TaskCountsRow> {
    const { where, params } = taskWhere(viewpoint, filters);
    const row = await this.db.get<TaskCountsRow>(
      r,
      `SELECT
       count(*) FILTER (WHERE t.status = 'open') AS open,
       count(*) FILTER (WHERE t.status = 'open' AND NOT (${UNBLOCKED})) AS blocked,
       count(*) FILTER (WHERE t.status = 'claimed') AS claimed,
       count(*) FILTER (WHERE t.status = 'completed') AS completed,
       count(*) FILTER (WHERE t.status = 'failed') AS failed
     FROM tasks t WHERE ${where.join(" AND ")}`,
      ...params,
    );
    return row ?? { open: 0, blocked: 0, claimed: 0, completed: 0, failed: 0 };
  }

  list(r: Reader, viewpoint: Viewpoint, filters: TaskFilters, after: { at: string; pk: number } | null, limit: number): Promise<TaskRow[]> {
    const { where, params } = taskWhere(viewpoint, filters);
    if (after) {
      where.push("(t.created_at < ? OR (t.created_at = ? AND t.pk < ?))");
      params.push(after.at, after.at, after.pk);
    }
    return this.db.all<TaskRow>(
      r,
      `SELECT ${this.columns} FROM tasks t WHERE ${where.join(" AND ")} ORDER BY t.created_at DESC, t.pk DESC LIMIT ?`,
      ...params,
      limit,
    );
  }

  // PostgreSQL's sum() of a bigint is numeric, which pg hands over as a string: affinity is cast back to an integer.
  recommended(r: Reader, viewpoint: Viewpoint, project: string | null | undefined, limit: number): Promise<RecommendedRow[]> {
    const visible = visibleInProject("t", viewpoint);
    const where = [visible.sql, UNBLOCKED, "(t.assigned_to IS NULL OR t.assigned_to = ?)"];
    const params: unknown[] = [...visible.params, viewpoint.agentId];
    if (project === null) where.push("t.project IS NULL");
    else if (project !== undefined) {
      where.push("t.project = ?");
      params.push(project);
    }
    return this.db.all<RecommendedRow>(
      r,
      `WITH earned AS (
       SELECT tag.value AS tag, sum(CASE o.outcome WHEN 'completed' THEN 1 ELSE -1 END) AS score
       FROM task_outcomes o, ${this.db.dialect.jsonElements("o.tags", "tag")} WHERE o.agent_id = ? GROUP BY tag.value)
     SELECT ${this.columns},
       CAST(coalesce((SELECT sum(e.score) FROM task_tags tt JOIN earned e ON e.tag = tt.tag WHERE tt.task_pk = t.pk), 0) AS BIGINT) AS affinity
     FROM tasks t WHERE ${where.join(" AND ")}
     ORDER BY affinity DESC, CASE t.priority WHEN 'high' THEN 0 WHEN 'normal' THEN 1 ELSE 2 END, t.created_at, t.pk
     LIMIT ?`,
      viewpoint.agentId,
      ...params,
      limit,
    );
  }

  // SQLite's CROSS JOIN keeps its planner on the dependency index: from the tasks side it would walk every open task.
  async lockDependents(tx: Tx, pk: number): Promise<void> {
    const lock = this.db.dialect.lockRows(tx, "t");
    if (lock === "") return;
    await this.db.all(tx, `SELECT t.pk FROM tasks t WHERE t.pk IN (SELECT task_pk FROM task_dependencies WHERE depends_on_pk = ?) ORDER BY t.pk${lock}`, pk);
  }

  unblockedDependents(r: Reader, pk: number): Promise<TaskRow[]> {
    return this.db.all<TaskRow>(
      r,
      `SELECT ${this.columns} FROM task_dependencies dep ${this.db.dialect.orderedJoin} tasks t ON t.pk = dep.task_pk WHERE dep.depends_on_pk = ? AND ${UNBLOCKED}`,
      pk,
    );
  }

  async addDependency(tx: Tx, taskPk: number, dependsOnPk: number): Promise<boolean> {
    return (await this.db.run(tx, "INSERT INTO task_dependencies (task_pk, depends_on_pk) VALUES (?, ?) ON CONFLICT DO NOTHING", taskPk, dependsOnPk)) > 0;
  }

  async removeDependency(tx: Tx, taskPk: number, dependsOnPk: number): Promise<boolean> {
    return (await this.db.run(tx, "DELETE FROM task_dependencies WHERE task_pk = ? AND depends_on_pk = ?", taskPk, dependsOnPk)) > 0;
  }

  async dependsTransitively(r: Reader, fromPk: number, toPk: number): Promise<boolean> {
    const reached = await this.db.get(
      r,
      `WITH RECURSIVE reach(pk) AS (SELECT CAST(? AS BIGINT) UNION SELECT d.depends_on_pk FROM task_dependencies d JOIN reach r ON d.task_pk = r.pk)
       SELECT 1 FROM reach WHERE pk = ?`,
      fromPk,
      toPk,
    );
    return reached !== undefined;
  }

  async insertComment(tx: Tx, taskPk: number, row: Omit<CommentRow, "task_id">): Promise<void> {
    await this.db.run(
      tx,
      "INSERT INTO task_comments (id, task_pk, agent_id, kind, comment, created_at) VALUES (?, ?, ?, ?, ?, ?)",
      row.id,
      taskPk,
      row.agent_id,
      row.kind,
      row.comment,
      row.created_at,
    );
  }

  comments(r: Reader, taskPk: number, afterPk: number, limit: number): Promise<(CommentRow & { pk: number })[]> {
    return this.db.all<CommentRow & { pk: number }>(
      r,
      `SELECT c.pk, c.id, t.id AS task_id, c.agent_id, c.kind, c.comment, c.created_at
     FROM task_comments c JOIN tasks t ON t.pk = c.task_pk WHERE c.task_pk = ? AND c.pk > ? ORDER BY c.pk LIMIT ?`,
      taskPk,
      afterPk,
      limit,
    );
  }

  async insertOutcome(tx: Tx, row: NewOutcomeRow): Promise<void> {
    await this.db.run(
      tx,
      "INSERT INTO task_outcomes (task_pk, agent_id, outcome, tags, claimed_at, finished_at) VALUES (?, ?, ?, ?, ?, ?)",
      row.task_pk,
      row.agent_id,
      row.outcome,
      row.tags,
      row.claimed_at,
      row.finished_at,
    );
  }

  outcomes(r: Reader, viewpoint: Viewpoint, tag?: string): Promise<OutcomeRow[]> {
    const { dialect } = this.db;
    const visible = visibleInProject("t", viewpoint);
    const byTag = tag === undefined ? "" : `AND EXISTS (SELECT 1 FROM ${dialect.jsonElements("o.tags", "tag")} WHERE tag.value = ?)`;
    return this.db.all<OutcomeRow>(
      r,
      `SELECT o.agent_id, o.outcome, o.tags, ${dialect.secondsBetween("o.claimed_at", "o.finished_at")} AS seconds
     FROM task_outcomes o JOIN tasks t ON t.pk = o.task_pk WHERE ${visible.sql} ${byTag} ORDER BY o.agent_id, o.pk`,
      ...visible.params,
      ...(tag === undefined ? [] : [tag]),
    );
  }

  // In a transaction the expired claims are locked, and those another server is already expiring are passed over.
  lapsedClaims(r: Reader, nowIso: string, limit: number): Promise<TaskRow[]> {
    return this.db.all<TaskRow>(
      r,
      `SELECT ${this.columns} FROM tasks t WHERE t.status = 'claimed' AND t.lease_expires_at IS NOT NULL AND t.lease_expires_at <= ?
     ORDER BY t.lease_expires_at LIMIT ?${this.db.dialect.skipLocked(r, "t")}`,
      nowIso,
      limit,
    );
  }

  extendLeases(tx: Tx, agentId: string, until: string): Promise<number> {
    return this.db.run(tx, "UPDATE tasks SET lease_expires_at = ? WHERE assigned_to = ? AND status = 'claimed' AND lease_expires_at IS NOT NULL", until, agentId);
  }

  async claimedIdsByAgent(r: Reader, agentIds: string[], viewpoint: Viewpoint): Promise<Map<string, string[]>> {
    const agents = this.db.dialect.inList("t.assigned_to", agentIds);
    const visible = visibleInProject("t", viewpoint);
    const rows = await this.db.all<{ assigned_to: string; id: string }>(
      r,
      `SELECT t.assigned_to, t.id FROM tasks t
       WHERE ${agents.sql} AND t.status = 'claimed' AND ${visible.sql} ORDER BY t.claimed_at, t.pk`,
      ...agents.params,
      ...visible.params,
    );
    const claimed = new Map<string, string[]>();
    for (const row of rows) {
      const ids = claimed.get(row.assigned_to);
      if (ids) ids.push(row.id);
      else claimed.set(row.assigned_to, [row.id]);
    }
    return claimed;
  }

  claimedBy(r: Reader, agentId: string, limit: number): Promise<TaskRow[]> {
    return this.db.all<TaskRow>(r, `SELECT ${this.columns} FROM tasks t WHERE t.assigned_to = ? AND t.status = 'claimed' ORDER BY t.claimed_at, t.pk LIMIT ?`, agentId, limit);
  }

  async deleteProject(tx: Tx, project: string): Promise<number> {
    // A project's blueprint runs go with its tasks (their node rows with them).
    await this.db.run(tx, "DELETE FROM blueprint_runs WHERE project = ?", project);
    return this.db.run(tx, "DELETE FROM tasks WHERE project = ?", project);
  }
}
