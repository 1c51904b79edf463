import { z } from "zod";
import { priority } from "./tasks.js";
import { timestamp } from "./timestamp.js";

// Blueprint runs (CONTRACT §17): what an instantiation made of a blueprint, and where it stands.

export const runStatus = z.enum(["running", "completed", "failed", "cancelled"]);
export type RunStatus = z.output<typeof runStatus>;

const runNodeStatus = z.enum(["pending", "open", "claimed", "completed", "failed", "skipped"]);

const runNode = z.object({
  node_id: z.string(),
  key: z.string().describe("the node id, or for a fan-out item `node[index]`"),
  task_id: z.uuid().nullable().describe("null while a fan-out waits for its items, or when it had none"),
  status: runNodeStatus,
  item: z.unknown().describe("the fan-out item this task is for; null otherwise"),
  attempt: z.number().int().min(1),
});
export type RunNode = z.output<typeof runNode>;

export const blueprintRun = z
  .object({
    id: z.uuid(),
    blueprint: z.object({ id: z.uuid(), name: z.string(), version: z.number().int() }),
    project: z.string().nullable(),
    params: z.record(z.string(), z.unknown()),
    status: runStatus,
    created_by: z.string(),
    created_at: timestamp,
    updated_at: timestamp,
    nodes: z.array(runNode),
  })
  .meta({ id: "BlueprintRun" });
export type BlueprintRun = z.output<typeof blueprintRun>;

/** A task a dry run would create. */
const plannedTask = z.object({
  node_id: z.string(),
  key: z.string(),
  title: z.string(),
  description: z.string(),
  priority,
  tags: z.array(z.string()),
  depends_on: z.array(z.string()).describe("keys of the tasks it would wait for"),
  gate: z.enum(["human", "timer", "task"]).nullable(),
  assigned_to: z.string().nullable(),
  item: z.unknown(),
});

export const runPlan = z
  .object({
    dry_run: z.literal(true),
    blueprint: z.object({ id: z.uuid(), name: z.string(), version: z.number().int() }),
    project: z.string().nullable(),
    params: z.record(z.string(), z.unknown()),
    tasks: z.array(plannedTask),
    pending: z.array(z.string()).describe("fan-out nodes expanded later, when the node their items come from completes"),
    skipped: z.array(z.string()).describe("fan-out nodes with no items"),
  })
  .meta({ id: "BlueprintRunPlan" });
export type RunPlan = z.output<typeof runPlan>;
