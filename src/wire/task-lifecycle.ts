import type { TaskStatus } from "./tasks.js";

// No zod here: the web UI bundles this table to offer only the actions a task's status allows.

/** What an action asks of a task's status, and the status it leaves the task in. */
interface Transition {
  /** The statuses the action is legal from. */
  readonly from: readonly TaskStatus[];
  /** The status the action leads to; null: the status stays as it is. */
  readonly to: TaskStatus | null;
  /** The 409's text for any other status; null: the action is never refused for the task's status. */
  readonly refusal: string | null;
}

const EVERY_STATUS = ["open", "claimed", "completed", "failed"] as const satisfies readonly TaskStatus[];

/**
 * The task lifecycle. A task is created open; claim takes it, unclaim (or a lapsed lease, which is
 * an unclaim by the lease sweep) gives it back, complete and fail close it, reopen opens it again.
 * Two moves are the server's, for blueprint runs: `pass` completes an open gate (a timer that
 * elapsed, a task it waited for), `abandon` fails a run's unfinished tasks when the run fails or
 * is cancelled.
 * The server checks a task's status against this table and nowhere else, and the web UI offers
 * an action only where it allows it.
 */
export const TASK_TRANSITIONS = {
  claim: { from: ["open"], to: "claimed", refusal: "task not open" },
  unclaim: { from: ["claimed"], to: "open", refusal: "task not claimed" },
  complete: { from: ["claimed"], to: "completed", refusal: "task not claimed" },
  fail: { from: ["claimed"], to: "failed", refusal: "task not claimed" },
  reopen: { from: ["completed", "failed"], to: "open", refusal: "task not closed" },
  pass: { from: ["open"], to: "completed", refusal: "gate not open" },
  abandon: { from: ["open", "claimed"], to: "failed", refusal: "task is closed" },
  update: { from: ["open", "claimed"], to: null, refusal: "task is closed" },
  heartbeat: { from: ["claimed"], to: null, refusal: "task not claimed" },
  comment: { from: EVERY_STATUS, to: null, refusal: null },
  addDependency: { from: EVERY_STATUS, to: null, refusal: null },
  removeDependency: { from: EVERY_STATUS, to: null, refusal: null },
} as const satisfies Record<string, Transition>;

export type TaskAction = keyof typeof TASK_TRANSITIONS;

/** Whether the task's status allows the action (who may take it is another question). */
export const allowedFrom = (action: TaskAction, status: TaskStatus): boolean => (TASK_TRANSITIONS[action].from as readonly TaskStatus[]).includes(status);
