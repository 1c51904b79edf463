import type { CommentKind, Priority, TaskStatus } from "../wire/tasks.js";
import type { IdRef } from "../core/ids.js";
import { rowColumns } from "./row-columns.js";
import type { Reader, Tx } from "./store.js";
import type { Viewpoint } from "./visibility.js";

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
  /** The blueprint run (CONTRACT §17) the task belongs to, and its node's key (`publish[2]`). */
  run_id: string | null;
  node_key: string | null;
  /** A gate no agent may take: `human` (the web UI's), `timer` and `task` (the server's). */
  gate: "human" | "timer" | "task" | null;
  /** Computed: ids of the tasks this one depends on (JSON array). */
  depends_on: string;
  /** Computed: 1 while a dependency is not completed. */
  blocked: number;
}

export const TASK_ROW_COLUMNS = rowColumns<TaskRow, "depends_on" | "blocked">("tasks", {
  pk: true, id: true, title: true, description: true, status: true, created_by: true, assigned_to: true, reserved: true, project: true, priority: true,
  tags: true, due_at: true, expected_outcome: true, result: true, created_at: true, updated_at: true, claimed_at: true, completed_at: true,
  lease_expires_at: true, run_id: true, node_key: true, gate: true,
});

export type NewTaskRow = Omit<TaskRow, "pk" | "depends_on" | "blocked">;

export const TASK_PATCHABLE_COLUMNS = [
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

export type TaskPatch = { [Column in (typeof TASK_PATCHABLE_COLUMNS)[number]]?: TaskRow[Column] | undefined };

export interface TaskFilters {
  status?: TaskStatus | undefined;
  /** Creator or assignee. */
  agent?: string | undefined;
  project?: string | null | undefined;
  tag?: string | undefined;
  priority?: Priority | undefined;
  unblocked?: boolean | undefined;
  run_id?: string | undefined;
  node_key?: string | undefined;
}

export interface TaskCountsRow {
  open: number;
  blocked: number;
  claimed: number;
  completed: number;
  failed: number;
}

export interface RecommendedRow extends TaskRow {
  affinity: number;
}

export interface CommentRow {
  id: string;
  task_id: string;
  agent_id: string;
  kind: CommentKind;
  comment: string;
  created_at: string;
}

/** `task_id` is the task's, from `tasks`. */
export const COMMENT_ROW_COLUMNS = rowColumns<CommentRow, "task_id">(
  "task_comments",
  { id: true, agent_id: true, kind: true, comment: true, created_at: true },
  ["pk", "task_pk"],
);

export interface NewOutcomeRow {
  task_pk: number;
  agent_id: string;
  outcome: "completed" | "failed";
  tags: string;
  claimed_at: string;
  finished_at: string;
}

export const NEW_OUTCOME_ROW_COLUMNS = rowColumns<NewOutcomeRow>(
  "task_outcomes",
  { task_pk: true, agent_id: true, outcome: true, tags: true, claimed_at: true, finished_at: true },
  ["pk"],
);

export interface OutcomeRow {
  agent_id: string;
  outcome: "completed" | "failed";
  tags: string;
  seconds: number;
}

/** Tasks with their tags, dependencies, comment log and recorded outcomes. */
export interface TaskStore {
  insert(tx: Tx, row: NewTaskRow, tags: string[], dependsOnPks: number[]): Promise<number>;
  replaceTags(tx: Tx, pk: number, tags: string[]): Promise<void>;
  byPk(r: Reader, pk: number): Promise<TaskRow | undefined>;
  /** The tasks with these pks, by pk, read without locks: one statement for a page of them. */
  byPks(r: Reader, pks: number[]): Promise<Map<number, TaskRow>>;
  /** Tasks visible to `viewpoint` by full id or prefix (at most 2). */
  findVisible(r: Reader, viewpoint: Viewpoint, match: IdRef): Promise<TaskRow[]>;
  /** Applies `patch` when the task is still in `expectedStatus` (if given); false when it was not. */
  patch(tx: Tx, pk: number, patch: TaskPatch, expectedStatus?: TaskStatus): Promise<boolean>;
  /** How many visible tasks are in each status (blocked: open with an unfinished dependency). */
  count(r: Reader, viewpoint: Viewpoint, filters: Omit<TaskFilters, "status" | "unblocked">): Promise<TaskCountsRow>;
  /** Newest first; `after` continues a previous page. */
  list(r: Reader, viewpoint: Viewpoint, filters: TaskFilters, after: { at: string; pk: number } | null, limit: number): Promise<TaskRow[]>;
  /**
   * Open, unblocked tasks the agent may claim, by its earned affinity for their tags (completions
   * count +1 and failures −1 per tag), then priority, then age.
   */
  recommended(r: Reader, viewpoint: Viewpoint, project: string | null | undefined, limit: number): Promise<RecommendedRow[]>;
  /** Open tasks that depend on `pk` and have no unfinished dependency left. */
  /**
   * Locks the tasks that depend on this one, until the transaction ends (where transactions
   * overlap): of two transactions finishing the last two dependencies of one task, the second waits
   * and then sees the first's, so exactly one of them finds the dependent unblocked.
   */
  lockDependents(tx: Tx, pk: number): Promise<void>;
  unblockedDependents(r: Reader, pk: number): Promise<TaskRow[]>;
  addDependency(tx: Tx, taskPk: number, dependsOnPk: number): Promise<boolean>;
  removeDependency(tx: Tx, taskPk: number, dependsOnPk: number): Promise<boolean>;
  /** Whether `fromPk` depends, directly or through others, on `toPk`. */
  dependsTransitively(r: Reader, fromPk: number, toPk: number): Promise<boolean>;
  insertComment(tx: Tx, taskPk: number, row: Omit<CommentRow, "task_id">): Promise<void>;
  /** The comment log in order; `afterPk` continues a previous page. */
  comments(r: Reader, taskPk: number, afterPk: number, limit: number): Promise<(CommentRow & { pk: number })[]>;
  insertOutcome(tx: Tx, row: NewOutcomeRow): Promise<void>;
  /** Recorded outcomes of tasks `viewpoint` can see, with claim-to-outcome seconds; optionally only those tagged `tag`. */
  outcomes(r: Reader, viewpoint: Viewpoint, tag?: string): Promise<OutcomeRow[]>;
  /** Claims whose lease ran out before `nowIso`. */
  lapsedClaims(r: Reader, nowIso: string, limit: number): Promise<TaskRow[]>;
  /** Pushes out the lease of every task the agent holds (its activity proves it is alive). */
  extendLeases(tx: Tx, agentId: string, until: string): Promise<number>;
  /**
   * For each of `agentIds`, the ids of the tasks it holds a claim on that `viewpoint` can see, in
   * the order they were claimed (an agent with none is absent). One query for a page of agents.
   */
  claimedIdsByAgent(r: Reader, agentIds: string[], viewpoint: Viewpoint): Promise<Map<string, string[]>>;
  claimedBy(r: Reader, agentId: string, limit: number): Promise<TaskRow[]>;
  /** Deletes a project's tasks (with their comments, dependencies and outcomes); returns how many. */
  deleteProject(tx: Tx, project: string): Promise<number>;
}
