import { newId } from "../core/ids.js";
import type { NewTaskRow, TaskRow } from "../store/tasks.js";
import type { ServerEventPayloads, ServerEventType } from "../wire/events.js";
import type { CompactTask, Task, TaskStatus } from "../wire/tasks.js";
import { ageOf } from "./compact-entries.js";

/** The one mapping from a stored row to the task clients see. (A comment row is already its wire record.) */
export const toTask = (row: TaskRow): Task => ({
  id: row.id,
  title: row.title,
  description: row.description,
  status: row.status,
  created_by: row.created_by,
  assigned_to: row.assigned_to,
  project: row.project,
  priority: row.priority,
  tags: JSON.parse(row.tags) as string[],
  depends_on: (JSON.parse(row.depends_on) as string[]).sort(),
  blocked: row.blocked === 1,
  due_at: row.due_at,
  expected_outcome: row.expected_outcome,
  result: row.result === null ? null : (JSON.parse(row.result) as unknown),
  created_at: row.created_at,
  updated_at: row.updated_at,
  claimed_at: row.claimed_at,
  completed_at: row.completed_at,
  lease_expires_at: row.lease_expires_at,
  run_id: row.run_id,
  node_key: row.node_key,
  gate: row.gate,
});

type TaskEventType = Extract<ServerEventType, `task.${string}`>;

/** A task event's type with its payload, the one checked against the other. */
export type TaskEvent = { [T in TaskEventType]: { type: T; payload: ServerEventPayloads[T] } }[TaskEventType];

/** What every task event's payload says about the task, ahead of what its type adds. */
export const taskEventFields = (row: TaskRow): { task_id: string; project: string | null; status: TaskStatus; assigned_to: string | null } => ({
  task_id: row.id,
  project: row.project,
  status: row.status,
  assigned_to: row.assigned_to,
});

/** What a new task is given; the rest of its row is that of an open, unclaimed task. */
export type OpenTaskFields = Pick<NewTaskRow, "title" | "description" | "created_by" | "assigned_to" | "project" | "priority" | "due_at" | "expected_outcome"> &
  Partial<Pick<NewTaskRow, "run_id" | "node_key" | "gate">> & { tags: string[]; at: string };

/** The row of a new open task: reserved when it has an assignee, created and updated `at`. */
export const openTaskRow = ({ tags, at, ...fields }: OpenTaskFields): NewTaskRow => ({
  id: newId(),
  status: "open",
  reserved: fields.assigned_to === null ? 0 : 1,
  tags: JSON.stringify(tags),
  result: null,
  created_at: at,
  updated_at: at,
  claimed_at: null,
  completed_at: null,
  lease_expires_at: null,
  run_id: null,
  node_key: null,
  gate: null,
  ...fields,
});

/** A task in compact form: what an agent needs to pick one; `task_get` reads the rest. */
export const toCompactTask = (task: Task, nowMs: number): CompactTask => ({
  id: task.id,
  title: task.title,
  status: task.status,
  priority: task.priority,
  blocked: task.blocked,
  assigned_to: task.assigned_to,
  age: ageOf(task.created_at, nowMs),
  ...(task.due_at === null ? {} : { due_at: task.due_at }),
  ...(task.gate === null ? {} : { gate: task.gate }),
});
