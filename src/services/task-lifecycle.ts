import { conflict } from "../core/errors.js";
import { allowedFrom, TASK_TRANSITIONS, type TaskAction } from "../wire/task-lifecycle.js";
import type { TaskStatus } from "../wire/tasks.js";

/** 409 with the action's refusal unless the action is legal from `status` (the table is src/wire/task-lifecycle.ts). */
export function checkTransition(action: TaskAction, status: TaskStatus): void {
  const { refusal } = TASK_TRANSITIONS[action];
  if (refusal !== null && !allowedFrom(action, status)) throw conflict(refusal);
}
