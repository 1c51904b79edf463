import { z } from "zod";
import { agentId, idRef, projectId, tags } from "./fields.js";
import { priority, TASK_TITLE_MAX } from "./tasks.js";
import { timestampInput } from "./timestamp.js";

// What a task is made from and changed to: `task_create`'s and `task_update`'s input, and what
// `TaskService.create` and `TaskWrites.changeIn` take, declared once.

/** The fields a change may set (a PATCH's, and what a blueprint run renders or schedules). */
export const taskChange = z.strictObject({
  title: z.string().trim().min(1).max(TASK_TITLE_MAX).optional(),
  description: z.string().optional(),
  priority: priority.optional(),
  tags: tags.optional(),
  due_at: timestampInput.nullable().optional(),
  expected_outcome: z.string().max(2000).nullable().optional(),
});
export type TaskChange = z.output<typeof taskChange>;

/** A new task, as `task_create` takes it. */
export const newTask = z.strictObject({
  title: z.string().trim().min(1).max(TASK_TITLE_MAX),
  description: z.string().optional().describe("at most MAX_CONTENT_BYTES bytes"),
  priority: priority.optional().describe("default normal"),
  tags: tags.optional(),
  due_at: timestampInput.nullable().optional(),
  depends_on: z.array(idRef).max(100).optional(),
  assigned_to: agentId.nullable().optional().describe("reserve the task for this agent"),
  project: projectId.nullable().optional(),
  expected_outcome: z.string().max(2000).nullable().optional(),
});
export type NewTask = z.output<typeof newTask>;
