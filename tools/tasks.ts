import { z } from "zod";
import { defineOperation } from "./operation.js";
import { compactTask, priority, recommendedTask, task, taskComment as commentRecord, taskCounts as countsRecord, taskStatus } from "../src/wire/tasks.js";
import { comment, compactFlag, cursorParam } from "./schemas.js";
import { idRef, limitParam, projectId } from "../src/wire/fields.js";
import { newTask, taskChange } from "../src/wire/task-inputs.js";
import { toCompactTask } from "../src/services/task-records.js";

const taskParam = { id: idRef.describe("task id or unique prefix") };
const lifecycleComment = { comment: comment.optional() };

const taskCreate = defineOperation({
  name: "task_create",
  title: "Create a task",
  description:
    "Create a task for any agent to claim; blocked until its `depends_on` tasks are completed. `assigned_to` reserves it. Default project: your current one (null: global).",
  kind: "create",
  http: { method: "POST", path: "/tasks" },
  input: newTask,
  output: task,
  errors: ["NOT_FOUND", "FORBIDDEN", "PAYLOAD_TOO_LARGE"],
  handle({ services, caller }, input) {
    return services.tasks.create(caller, input);
  },
});

const taskList = defineOperation({
  name: "task_list",
  title: "List tasks",
  description:
    "Tasks you can see, newest first. `unblocked=true`: open tasks whose dependencies are all completed.",
  kind: "list",
  http: { method: "GET", path: "/tasks" },
  input: z.strictObject({
    status: taskStatus.optional(),
    agent: z.string().min(1).max(64).optional().describe("creator or assignee"),
    project: projectId.nullable().optional().describe("only this project; null (or empty) for global tasks"),
    tag: z.string().min(1).max(64).optional(),
    priority: priority.optional(),
    unblocked: z.boolean().optional(),
    run_id: z.uuid().optional().describe("a blueprint run's"),
    node_key: z.string().min(1).max(200).optional(),
    limit: limitParam(500, 50),
    cursor: cursorParam,
    compact: compactFlag.describe("each task as {id, title, status, priority, blocked, assigned_to, age, due_at?, gate?}"),
  }),
  output: z.union([task, compactTask]),
  async handle({ services, caller }, input) {
    const { compact, ...filters } = input;
    const page = await services.tasks.list(caller, filters);
    if (compact !== true) return page;
    const nowMs = Date.now();
    return { ...page, items: page.items.map((item) => toCompactTask(item, nowMs)) };
  },
});

const taskCounts = defineOperation({
  name: "task_counts",
  title: "Count tasks by status",
  description:
    "How many tasks you can see are open (and of those, blocked by an unfinished dependency), claimed, completed and " +
    "failed; filters as task_list.",
  kind: "read",
  http: { method: "GET", path: "/tasks/counts" },
  input: z.strictObject({
    agent: z.string().min(1).max(64).optional().describe("creator or assignee"),
    project: projectId.nullable().optional().describe("only this project; null (or empty) for global tasks"),
    tag: z.string().min(1).max(64).optional(),
    priority: priority.optional(),
  }),
  output: countsRecord,
  handle({ services, caller }, input) {
    return services.tasks.counts(caller, input);
  },
});

const taskRecommended = defineOperation({
  name: "task_recommended",
  title: "Tasks to take next",
  description:
    "Open, unblocked tasks for you, best first: your record on their tags, then priority, then age.",
  kind: "read",
  http: { method: "GET", path: "/tasks/recommended" },
  input: z.strictObject({ project: projectId.nullable().optional(), limit: limitParam(100, 10) }),
  output: z.array(recommendedTask),
  handle({ services, caller }, input) {
    return services.tasks.recommended(caller, input.project, input.limit);
  },
});

const taskGet = defineOperation({
  name: "task_get",
  title: "Read a task",
  description: "One task by id or unique prefix.",
  kind: "read",
  http: { method: "GET", path: "/tasks/:id" },
  input: z.strictObject(taskParam),
  output: task,
  errors: ["NOT_FOUND"],
  handle({ services, caller }, input) {
    return services.tasks.get(caller, input.id);
  },
});

const taskUpdate = defineOperation({
  name: "task_update",
  title: "Update a task",
  description:
    "Change a task's title, description, priority, tags, due date or expected outcome: its creator, assignee or an owner, until it is finished.",
  kind: "update",
  http: { method: "PATCH", path: "/tasks/:id" },
  input: z.strictObject({ ...taskParam, ...taskChange.shape }),
  output: task,
  errors: ["NOT_FOUND", "FORBIDDEN", "CONFLICT"],
  handle({ services, caller }, { id, ...change }) {
    return services.tasks.update(caller, id, change);
  },
});

const taskClaim = defineOperation({
  name: "task_claim",
  title: "Claim a task",
  description:
    "Claim an open, unblocked task before working on it; of racing agents one wins. Your calls keep the claim alive; a silent claim lapses after TASK_LEASE_SECONDS.",
  kind: "action",
  http: { method: "POST", path: "/tasks/:id/claim" },
  input: z.strictObject({ ...taskParam, ...lifecycleComment }),
  output: task,
  errors: ["NOT_FOUND", "FORBIDDEN", "CONFLICT"],
  handle({ services, caller }, input) {
    return services.tasks.claim(caller, input.id, input.comment ?? "");
  },
});

const taskUnclaim = defineOperation({
  name: "task_unclaim",
  title: "Release a claim",
  description:
    "Give a claimed task back: it is open again. Its assignee, or an owner.",
  kind: "action",
  http: { method: "POST", path: "/tasks/:id/unclaim" },
  input: z.strictObject({ ...taskParam, ...lifecycleComment }),
  output: task,
  errors: ["NOT_FOUND", "FORBIDDEN", "CONFLICT"],
  handle({ services, caller }, input) {
    return services.tasks.unclaim(caller, input.id, input.comment ?? "");
  },
});

const taskComplete = defineOperation({
  name: "task_complete",
  title: "Complete a task",
  description:
    "Finish your claimed task, optionally with `output` (JSON up to 64 KiB, stored as `result`). Unblocks its dependents.",
  kind: "action",
  http: { method: "POST", path: "/tasks/:id/complete" },
  input: z.strictObject({ ...taskParam, ...lifecycleComment, output: z.unknown().optional().describe("any JSON, at most 64 KiB") }),
  output: task,
  errors: ["NOT_FOUND", "FORBIDDEN", "CONFLICT", "PAYLOAD_TOO_LARGE"],
  handle({ services, caller }, input) {
    return services.tasks.complete(caller, input.id, input.comment ?? "", input.output);
  },
});

const taskFail = defineOperation({
  name: "task_fail",
  title: "Fail a task",
  description:
    "Record that your claimed task could not be done. Its creator or an owner may reopen it.",
  kind: "action",
  http: { method: "POST", path: "/tasks/:id/fail" },
  input: z.strictObject({ ...taskParam, ...lifecycleComment }),
  output: task,
  errors: ["NOT_FOUND", "FORBIDDEN", "CONFLICT"],
  handle({ services, caller }, input) {
    return services.tasks.fail(caller, input.id, input.comment ?? "");
  },
});

const taskReopen = defineOperation({
  name: "task_reopen",
  title: "Reopen a task",
  description: "Put a completed or failed task back to open (its creator or an owner).",
  kind: "action",
  http: { method: "POST", path: "/tasks/:id/reopen" },
  input: z.strictObject({ ...taskParam, ...lifecycleComment }),
  output: task,
  errors: ["NOT_FOUND", "FORBIDDEN", "CONFLICT"],
  handle({ services, caller }, input) {
    return services.tasks.reopen(caller, input.id, input.comment ?? "");
  },
});

const taskHeartbeat = defineOperation({
  name: "task_heartbeat",
  title: "Keep a claim alive",
  description: "Extend your claim's lease by TASK_LEASE_SECONDS (assignee only). Any other request of yours does the same.",
  kind: "action",
  http: { method: "POST", path: "/tasks/:id/heartbeat" },
  input: z.strictObject(taskParam),
  output: task,
  errors: ["NOT_FOUND", "FORBIDDEN", "CONFLICT"],
  handle({ services, caller }, input) {
    return services.tasks.heartbeat(caller, input.id);
  },
});

const taskComments = defineOperation({
  name: "task_comments",
  title: "A task's comment log",
  description: "Comments and lifecycle records (claim, unclaim, complete, fail, reopen), in order.",
  kind: "list",
  http: { method: "GET", path: "/tasks/:id/comments" },
  input: z.strictObject({ ...taskParam, limit: limitParam(500, 50), cursor: cursorParam }),
  output: commentRecord,
  errors: ["NOT_FOUND"],
  handle({ services, caller }, input) {
    return services.tasks.comments(caller, input.id, input.cursor, input.limit);
  },
});

const taskComment = defineOperation({
  name: "task_comment",
  title: "Comment on a task",
  description:
    "Add a comment to a task's log.",
  kind: "create",
  http: { method: "POST", path: "/tasks/:id/comments" },
  input: z.strictObject({ ...taskParam, comment: comment.min(1) }),
  output: commentRecord,
  errors: ["NOT_FOUND"],
  handle({ services, caller }, input) {
    return services.tasks.addComment(caller, input.id, input.comment);
  },
});

const taskAddDependency = defineOperation({
  name: "task_add_dependency",
  title: "Add a dependency",
  description: "Make the task wait for another to be completed. Refused for the task itself and for one that would close a cycle.",
  kind: "create",
  http: { method: "POST", path: "/tasks/:id/dependencies" },
  input: z.strictObject({ ...taskParam, depends_on: idRef.describe("the task it must wait for") }),
  output: task,
  errors: ["NOT_FOUND", "CONFLICT"],
  handle({ services, caller }, input) {
    return services.tasks.addDependency(caller, input.id, input.depends_on);
  },
});

const taskRemoveDependency = defineOperation({
  name: "task_remove_dependency",
  title: "Remove a dependency",
  description: "The task no longer waits for that one.",
  kind: "update",
  http: { method: "DELETE", path: "/tasks/:id/dependencies/:dep_id", status: 200 },
  input: z.strictObject({ ...taskParam, dep_id: idRef.describe("the dependency to remove") }),
  output: task,
  errors: ["NOT_FOUND"],
  handle({ services, caller }, input) {
    return services.tasks.removeDependency(caller, input.id, input.dep_id);
  },
});

export const taskOperations = [
  taskCreate,
  taskList,
  taskCounts,
  taskRecommended,
  taskGet,
  taskUpdate,
  taskClaim,
  taskUnclaim,
  taskComplete,
  taskFail,
  taskReopen,
  taskHeartbeat,
  taskComments,
  taskComment,
  taskAddDependency,
  taskRemoveDependency,
];
