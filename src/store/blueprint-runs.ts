import type { TaskStatus } from "../wire/tasks.js";
import type { RunStatus } from "../wire/blueprint-runs.js";
import { rowColumns } from "./row-columns.js";
import type { Reader, Tx } from "./store.js";
import type { Viewpoint } from "./visibility.js";

export interface RunRow {
  pk: number;
  id: string;
  blueprint_pk: number;
  project: string | null;
  /** JSON of the params after defaults. */
  params: string;
  status: RunStatus;
  created_by: string;
  created_at: string;
  updated_at: string;
  /** From the blueprint version the run started with. */
  blueprint_id: string;
  blueprint_name: string;
  blueprint_version: number;
  document: string;
}

export const RUN_ROW_COLUMNS = rowColumns<RunRow, "blueprint_id" | "blueprint_name" | "blueprint_version" | "document">("blueprint_runs", {
  pk: true, id: true, blueprint_pk: true, project: true, params: true, status: true, created_by: true, created_at: true, updated_at: true,
});

export type NewRunRow = Omit<RunRow, "pk" | "blueprint_id" | "blueprint_name" | "blueprint_version" | "document">;

export type RunNodeState = "task" | "pending" | "skipped";

export interface RunNodeRow {
  pk: number;
  run_pk: number;
  node_id: string;
  key: string;
  task_pk: number | null;
  state: RunNodeState;
  /** JSON of the fan-out item, or null. */
  item: string | null;
  item_index: number | null;
  attempt: number;
  /** JSON `{ "<path>::<symbol>": sha | null }`: anchors' shas when the task was created. */
  anchors: string;
  gate_task_pk: number | null;
  /** From the node's task, when it has one. */
  task_id: string | null;
  task_status: TaskStatus | null;
}

export const RUN_NODE_ROW_COLUMNS = rowColumns<RunNodeRow, "task_id" | "task_status">("blueprint_run_nodes", {
  pk: true, run_pk: true, node_id: true, key: true, task_pk: true, state: true, item: true, item_index: true, attempt: true, anchors: true, gate_task_pk: true,
});

export type NewRunNodeRow = Omit<RunNodeRow, "pk" | "task_id" | "task_status">;

export interface RunFilters {
  name?: string | undefined;
  project?: string | null | undefined;
  status?: RunStatus | undefined;
}

/** Runs of blueprints and the node rows that tie each of their node keys to a task. */
export interface BlueprintRunStore {
  insertRun(tx: Tx, row: NewRunRow): Promise<number>;
  /** A run by id or key, visible or not: callers that answer a request check visibility with `visible`. */
  byId(r: Reader, id: string): Promise<RunRow | undefined>;
  byPk(r: Reader, pk: number): Promise<RunRow | undefined>;
  /** Whether `viewpoint` can see a run of `project`. */
  visible(r: Reader, viewpoint: Viewpoint, id: string): Promise<RunRow | undefined>;
  /** Visible runs, newest first, after the run key `afterPk`. */
  list(r: Reader, viewpoint: Viewpoint, filters: RunFilters, afterPk: number | null, limit: number): Promise<RunRow[]>;
  setStatus(tx: Tx, pk: number, status: RunStatus, at: string): Promise<void>;
  touch(tx: Tx, pk: number, at: string): Promise<void>;
  insertNode(tx: Tx, row: NewRunNodeRow): Promise<number>;
  /** A run's node rows in the order they were made. */
  nodes(r: Reader, runPk: number): Promise<RunNodeRow[]>;
  /** The node row of a run task. */
  nodeOfTask(r: Reader, taskPk: number): Promise<RunNodeRow | undefined>;
  patchNode(tx: Tx, pk: number, patch: { state?: RunNodeState; attempt?: number }): Promise<void>;
  deleteNode(tx: Tx, pk: number): Promise<void>;
  /** Open `task` gates waiting on the task `taskPk`. */
  gatesWaitingOn(r: Reader, taskPk: number): Promise<RunNodeRow[]>;
  /** Open timer gates whose time has come. */
  dueTimers(r: Reader, nowIso: string, limit: number): Promise<RunNodeRow[]>;
}
