import { z } from "zod";
import { timestamp } from "./timestamp.js";

// Tasks, their comment log, and the counts and recommendations built from them.

export const taskStatus = z.enum(["open", "claimed", "completed", "failed"]);
export type TaskStatus = z.output<typeof taskStatus>;

/** The longest task title, whether an agent wrote it or a blueprint run rendered it. */
export const TASK_TITLE_MAX = 300;

export const priority = z.enum(["low", "normal", "high"]);
export type Priority = z.output<typeof priority>;

export const task = z
  .object({
    id: z.uuid(),
    title: z.string(),
    description: z.string(),
    status: taskStatus,
    created_by: z.string(),
    assigned_to: z.string().nullable().describe("the claimant; on an open task, the agent it is reserved for"),
    project: z.string().nullable(),
    priority,
    tags: z.array(z.string()),
    depends_on: z.array(z.uuid()),
    blocked: z.boolean().describe("true while a dependency is not completed"),
    due_at: timestamp.nullable(),
    expected_outcome: z.string().nullable(),
    result: z.unknown().describe("the output sent with complete"),
    created_at: timestamp,
    updated_at: timestamp,
    claimed_at: timestamp.nullable(),
    completed_at: timestamp.nullable(),
    lease_expires_at: timestamp.nullable().describe("when an unrenewed claim is released"),
    run_id: z.uuid().nullable().describe("the blueprint run it belongs to"),
    node_key: z.string().nullable().describe("its node in the run, e.g. publish[2]"),
    gate: z.enum(["human", "timer", "task"]).nullable().describe("a gate no agent may take"),
  })
  .meta({ id: "Task" });
export type Task = z.output<typeof task>;

/** A task as a page lists it compactly (MCP's default, REST with `compact=true`): task_get reads the rest. */
export const compactTask = z
  .object({
    id: z.uuid(),
    title: z.string(),
    status: taskStatus,
    priority,
    blocked: z.boolean(),
    assigned_to: z.string().nullable(),
    age: z.string().describe("since it was created: now, 5m, 3h, 2d, 6w, 4mo, 2y"),
    due_at: timestamp.optional(),
    gate: z.enum(["human", "timer", "task"]).optional(),
  })
  .meta({ id: "CompactTask" });
export type CompactTask = z.output<typeof compactTask>;

/** What a comment log line records: a lifecycle step, or a free comment. */
export const commentKind = z.enum(["claim", "unclaim", "complete", "fail", "reopen", "comment"]);
export type CommentKind = z.output<typeof commentKind>;

export const taskComment = z
  .object({
    id: z.uuid(),
    task_id: z.uuid(),
    agent_id: z.string(),
    kind: commentKind,
    comment: z.string(),
    created_at: timestamp,
  })
  .meta({ id: "TaskComment" });
export type TaskComment = z.output<typeof taskComment>;

export const taskCounts = z
  .object({ open: z.number().int(), blocked: z.number().int(), claimed: z.number().int(), completed: z.number().int(), failed: z.number().int() })
  .meta({ id: "TaskCounts" });
export type TaskCounts = z.output<typeof taskCounts>;

export const recommendedTask = task.extend({ affinity: z.number().describe("sum over its tags of your completions minus failures") });
export type RecommendedTask = z.output<typeof recommendedTask>;
