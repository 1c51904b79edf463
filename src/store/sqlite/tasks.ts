import type { Db } from "./db.js";
import { visibleInProject, type Viewer } from "./visibility.js";

export type TaskStatus = "open" | "claimed" | "completed" | "failed";
export type Priority = "low" | "normal" | "high";
export type CommentKind = "claim" | "unclaim" | "complete" | "fail" | "reopen" | "comment";

export interface TaskRow {
  pk: number;
  id: string;
  title: string;
  description: string;
  status: TaskStatus;
  created_by: string;
  assigned_to: string | null;
  reserved: number;
  project: string | null;
  priority: Priority;
  tags: string;
  due_at: string | null;
  expected_outcome: string | null;
  result: string | null;
  created_at: string;
  updated_at: string;
  claimed_at: string | null;
  completed_at: string | null;
  lease_expires_at: string | null;
  /** Computed: ids of the tasks this one depends on (JSON array). */
  depends_on: string;
  /** Computed: 1 while a dependency is not completed. */
  blocked: number;
}

export type NewTaskRow = Omit<TaskRow, "pk" | "depends_on" | "blocked">;

// Every read of a task computes its dependencies and whether one of them is still unfinished.
const TASK_COLUMNS = `t.*,
  (SELECT json_group_array(dt.id) FROM task_dependencies d JOIN tasks dt ON dt.pk = d.depends_on_pk WHERE d.task_pk = t.pk) AS depends_on,
  EXISTS (SELECT 1 FROM task_dependencies d JOIN tasks dt ON dt.pk = d.depends_on_pk WHERE d.task_pk = t.pk AND dt.status != 'completed') AS blocked`;

export function insertTask(db: Db, row: NewTaskRow, tags: string[], dependsOnPks: number[]): number {
  const result = db.run(
    `INSERT INTO tasks (id, title, description, status, created_by, assigned_to, reserved, project, priority, tags, due_at,
       expected_outcome, result, created_at, updated_at, claimed_at, completed_at, lease_expires_at)
     VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
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
  );
  const pk = Number(result.lastInsertRowid);
  replaceTaskTags(db, pk, tags);
  for (const dependency of dependsOnPks) addDependency(db, pk, dependency);
  return pk;
}

export function replaceTaskTags(db: Db, pk: number, tags: string[]): void {
  db.run("DELETE FROM task_tags WHERE task_pk = ?", pk);
  for (const tag of tags) db.run("INSERT INTO task_tags (tag, task_pk) VALUES (?, ?)", tag, pk);
}

export const taskByPk = (db: Db, pk: number): TaskRow | undefined => db.get<TaskRow>(`SELECT ${TASK_COLUMNS} FROM tasks t WHERE t.pk = ?`, pk);

/** Tasks visible to `viewer` whose id is `id` or starts with `prefix` (at most 2). */
export function findVisibleTasks(db: Db, viewer: Viewer, ref: { id: string } | { prefix: string }): TaskRow[] {
  const visible = visibleInProject("t", viewer);
  const [match, params] = "id" in ref ? ["t.id = ?", [ref.id]] : ["t.id >= ? AND t.id < ?", [ref.prefix, `${ref.prefix}\uffff`]];
  return db.all<TaskRow>(`SELECT ${TASK_COLUMNS} FROM tasks t WHERE ${match} AND ${visible.sql} LIMIT 2`, ...params, ...visible.params);
}

const TASK_PATCHABLE_COLUMNS = [
  "title",
  "description",
  "status",
  "assigned_to",
  "reserved",
  "priority",
  "tags",
  "due_at",
  "expected_outcome",
  "result",
  "updated_at",
  "claimed_at",
  "completed_at",
  "lease_expires_at",
] as const;
const TASK_PATCHABLE = new Set<string>(TASK_PATCHABLE_COLUMNS);

export type TaskPatch = { [Column in (typeof TASK_PATCHABLE_COLUMNS)[number]]?: TaskRow[Column] | undefined };

/** Applies `patch` when the task is still in `expectedStatus` (if given); false when it was not. */
export function patchTask(db: Db, pk: number, patch: TaskPatch, expectedStatus?: TaskStatus): boolean {
  const entries = Object.entries(patch).filter(([column, value]) => TASK_PATCHABLE.has(column) && value !== undefined);
  if (entries.length === 0) return true;
  const guard = expectedStatus === undefined ? "" : " AND status = ?";
  const result = db.run(
    `UPDATE tasks SET ${entries.map(([column]) => `${column} = ?`).join(", ")} WHERE pk = ?${guard}`,
    ...entries.map(([, value]) => value),
    pk,
    ...(expectedStatus === undefined ? [] : [expectedStatus]),
  );
  return result.changes > 0;
}

export interface TaskFilters {
  status?: TaskStatus | undefined;
  /** Creator or assignee. */
  agent?: string | undefined;
  project?: string | null | undefined;
  tag?: string | undefined;
  priority?: Priority | undefined;
  unblocked?: boolean | undefined;
}

const UNBLOCKED = `t.status = 'open' AND NOT EXISTS (SELECT 1 FROM task_dependencies d JOIN tasks dt ON dt.pk = d.depends_on_pk
  WHERE d.task_pk = t.pk AND dt.status != 'completed')`;

export interface TaskCountsRow {
  open: number;
  blocked: number;
  claimed: number;
  completed: number;
  failed: number;
}

/** The WHERE clause of a task listing or count: visibility, then each filter given. */
function taskWhere(viewer: Viewer, filters: TaskFilters): { where: string[]; params: unknown[] } {
  const visible = visibleInProject("t", viewer);
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
  if (filters.unblocked) add(UNBLOCKED);
  return { where, params };
}

/** How many visible tasks are in each status (blocked: open with an unfinished dependency), in one scan. */
export function countTasks(db: Db, viewer: Viewer, filters: Omit<TaskFilters, "status" | "unblocked">): TaskCountsRow {
  const { where, params } = taskWhere(viewer, filters);
  const row = db.get<TaskCountsRow>(
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

/** Newest first; `after` continues a previous page. */
export function listTasks(db: Db, viewer: Viewer, filters: TaskFilters, after: { at: string; pk: number } | null, limit: number): TaskRow[] {
  const { where, params } = taskWhere(viewer, filters);
  if (after) {
    where.push("(t.created_at < ? OR (t.created_at = ? AND t.pk < ?))");
    params.push(after.at, after.at, after.pk);
  }
  return db.all<TaskRow>(
    `SELECT ${TASK_COLUMNS} FROM tasks t WHERE ${where.join(" AND ")} ORDER BY t.created_at DESC, t.pk DESC LIMIT ?`,
    ...params,
    limit,
  );
}

export interface RecommendedRow extends TaskRow {
  affinity: number;
}

/**
 * Open, unblocked tasks the agent may claim, by its earned affinity for their tags (completions
 * count +1 and failures −1 per tag), then priority, then age.
 */
export function recommendedTasks(db: Db, viewer: Viewer, project: string | null | undefined, limit: number): RecommendedRow[] {
  const visible = visibleInProject("t", viewer);
  const where = [visible.sql, UNBLOCKED, "(t.assigned_to IS NULL OR t.assigned_to = ?)"];
  const params: unknown[] = [...visible.params, viewer.agentId];
  if (project === null) where.push("t.project IS NULL");
  else if (project !== undefined) {
    where.push("t.project = ?");
    params.push(project);
  }
  return db.all<RecommendedRow>(
    `WITH earned AS (
       SELECT tag.value AS tag, sum(CASE o.outcome WHEN 'completed' THEN 1 ELSE -1 END) AS score
       FROM task_outcomes o, json_each(o.tags) tag WHERE o.agent_id = ? GROUP BY tag.value)
     SELECT ${TASK_COLUMNS},
       coalesce((SELECT sum(e.score) FROM task_tags tt JOIN earned e ON e.tag = tt.tag WHERE tt.task_pk = t.pk), 0) AS affinity
     FROM tasks t WHERE ${where.join(" AND ")}
     ORDER BY affinity DESC, CASE t.priority WHEN 'high' THEN 0 WHEN 'normal' THEN 1 ELSE 2 END, t.created_at, t.pk
     LIMIT ?`,
    viewer.agentId,
    ...params,
    limit,
  );
}

/** Open tasks that depend on `pk` and have no unfinished dependency left. */
// CROSS JOIN keeps the planner on the dependency index: from the tasks side it would walk every open task.
export const unblockedDependents = (db: Db, pk: number): TaskRow[] =>
  db.all<TaskRow>(
    `SELECT ${TASK_COLUMNS} FROM task_dependencies dep CROSS JOIN tasks t ON t.pk = dep.task_pk WHERE dep.depends_on_pk = ? AND ${UNBLOCKED}`,
    pk,
  );

export const addDependency = (db: Db, taskPk: number, dependsOnPk: number): boolean =>
  db.run("INSERT INTO task_dependencies (task_pk, depends_on_pk) VALUES (?, ?) ON CONFLICT DO NOTHING", taskPk, dependsOnPk).changes > 0;

export const removeDependency = (db: Db, taskPk: number, dependsOnPk: number): boolean =>
  db.run("DELETE FROM task_dependencies WHERE task_pk = ? AND depends_on_pk = ?", taskPk, dependsOnPk).changes > 0;

/** Whether `fromPk` depends, directly or through others, on `toPk`. */
export function dependsTransitively(db: Db, fromPk: number, toPk: number): boolean {
  return (
    db.get(
      `WITH RECURSIVE reach(pk) AS (SELECT ? UNION SELECT d.depends_on_pk FROM task_dependencies d JOIN reach r ON d.task_pk = r.pk)
       SELECT 1 FROM reach WHERE pk = ?`,
      fromPk,
      toPk,
    ) !== undefined
  );
}

export interface CommentRow {
  id: string;
  task_id: string;
  agent_id: string;
  kind: CommentKind;
  comment: string;
  created_at: string;
}

export function insertComment(db: Db, taskPk: number, row: Omit<CommentRow, "task_id">): void {
  db.run(
    "INSERT INTO task_comments (id, task_pk, agent_id, kind, comment, created_at) VALUES (?, ?, ?, ?, ?, ?)",
    row.id,
    taskPk,
    row.agent_id,
    row.kind,
    row.comment,
    row.created_at,
  );
}

/** The comment log in order; `afterPk` continues a previous page. */
export const listComments = (db: Db, taskPk: number, afterPk: number, limit: number): (CommentRow & { pk: number })[] =>
  db.all<CommentRow & { pk: number }>(
    `SELECT c.pk, c.id, t.id AS task_id, c.agent_id, c.kind, c.comment, c.created_at
     FROM task_comments c JOIN tasks t ON t.pk = c.task_pk WHERE c.task_pk = ? AND c.pk > ? ORDER BY c.pk LIMIT ?`,
    taskPk,
    afterPk,
    limit,
  );

export function insertOutcome(
  db: Db,
  row: { task_pk: number; agent_id: string; outcome: "completed" | "failed"; tags: string; claimed_at: string; finished_at: string },
): void {
  db.run(
    "INSERT INTO task_outcomes (task_pk, agent_id, outcome, tags, claimed_at, finished_at) VALUES (?, ?, ?, ?, ?, ?)",
    row.task_pk,
    row.agent_id,
    row.outcome,
    row.tags,
    row.claimed_at,
    row.finished_at,
  );
}

export interface OutcomeRow {
  agent_id: string;
  outcome: "completed" | "failed";
  tags: string;
  seconds: number;
}

/** Recorded outcomes of tasks `viewer` can see, with claim-to-outcome seconds; optionally only those tagged `tag`. */
export function outcomes(db: Db, viewer: Viewer, tag?: string): OutcomeRow[] {
  const visible = visibleInProject("t", viewer);
  const byTag = tag === undefined ? "" : "AND EXISTS (SELECT 1 FROM json_each(o.tags) WHERE value = ?)";
  return db.all<OutcomeRow>(
    `SELECT o.agent_id, o.outcome, o.tags, (julianday(o.finished_at) - julianday(o.claimed_at)) * 86400.0 AS seconds
     FROM task_outcomes o JOIN tasks t ON t.pk = o.task_pk WHERE ${visible.sql} ${byTag} ORDER BY o.agent_id, o.pk`,
    ...visible.params,
    ...(tag === undefined ? [] : [tag]),
  );
}

/** Claims whose lease ran out before `nowIso`. */
export const lapsedClaims = (db: Db, nowIso: string, limit: number): TaskRow[] =>
  db.all<TaskRow>(
    `SELECT ${TASK_COLUMNS} FROM tasks t WHERE t.status = 'claimed' AND t.lease_expires_at IS NOT NULL AND t.lease_expires_at <= ?
     ORDER BY t.lease_expires_at LIMIT ?`,
    nowIso,
    limit,
  );

/** Pushes out the lease of every task the agent holds (its activity proves it is alive). */
export const extendLeases = (db: Db, agentId: string, until: string): number =>
  db.run("UPDATE tasks SET lease_expires_at = ? WHERE assigned_to = ? AND status = 'claimed' AND lease_expires_at IS NOT NULL", until, agentId)
    .changes;

/** Ids of the tasks the agent holds a claim on, those `viewer` can see. */
export function claimedTaskIds(db: Db, agentId: string, viewer: Viewer): string[] {
  const visible = visibleInProject("t", viewer);
  return db
    .all<{ id: string }>(`SELECT t.id FROM tasks t WHERE t.assigned_to = ? AND t.status = 'claimed' AND ${visible.sql} ORDER BY t.claimed_at, t.pk`, agentId, ...visible.params)
    .map((row) => row.id);
}

export const claimedTasks = (db: Db, agentId: string, limit: number): TaskRow[] =>
  db.all<TaskRow>(`SELECT ${TASK_COLUMNS} FROM tasks t WHERE t.assigned_to = ? AND t.status = 'claimed' ORDER BY t.claimed_at, t.pk LIMIT ?`, agentId, limit);

/** Deletes a project's tasks (with their comments, dependencies and outcomes); returns how many. */
export const deleteProjectTasks = (db: Db, project: string): number => db.run("DELETE FROM tasks WHERE project = ?", project).changes;
