import { z } from "zod";
import { priority } from "./tasks.js";
import { timestamp } from "./timestamp.js";

// A blueprint document (CONTRACT §17): a named plan, a DAG of task templates. This is its shape;
// the rules between its parts (unique ids, known needs, no cycle, foreach sources, placeholders,
// output schema keywords, sizes) are checked by src/services/blueprints/validate.ts, which reports
// every problem with its path.

/** As agent and project ids: a lower-case slug. */
const slug = z.string().regex(/^[a-z0-9][a-z0-9_-]{0,63}$/, "must be a lower-case slug");
/**
 * Names a plain object's prototype answers to: as a param or node name they would be read from the
 * prototype (`{{params.constructor}}`) or set it (`params.__proto__ = …`) instead of holding a value.
 */
const RESERVED_NAMES: ReadonlySet<string> = new Set(["__proto__", "constructor", "prototype"]);

/** Node and param names appear in placeholders (`{{params.region}}`): identifiers, no dots. */
const identifier = z
  .string()
  .regex(/^[a-z_][a-z0-9_-]{0,63}$/, "must start with a letter or _ and hold only a-z, 0-9, _ and -")
  .refine((name) => !RESERVED_NAMES.has(name), "is a reserved name (__proto__, constructor, prototype)");

const blueprintParamType = z.enum(["string", "number", "integer", "boolean", "array", "object"]);

const blueprintParam = z.strictObject({
  name: identifier,
  type: blueprintParamType,
  required: z.boolean().default(false),
  default: z.unknown().optional(),
  enum: z.array(z.unknown()).min(1).max(100).optional(),
  description: z.string().max(2000).optional(),
});

export const blueprintCheck = z.discriminatedUnion("kind", [
  z.strictObject({ kind: z.literal("memory"), tag: z.string().min(1).max(64).optional(), query: z.string().min(1).max(500).optional() }),
  z.strictObject({ kind: z.literal("anchor_changed"), anchor: z.string().regex(/^[^:]+::.*$/, "must be <path>::<symbol>").max(1000) }),
  z.strictObject({ kind: z.literal("task"), task_id: z.string().min(1).max(64) }),
]);

const blueprintGate = z.discriminatedUnion("kind", [
  z.strictObject({ kind: z.literal("human"), title: z.string().min(1).max(200).optional() }),
  z.strictObject({ kind: z.literal("timer"), after: z.string().min(2).max(64).describe("an ISO 8601 duration, at most 30 days: PT2H, P1D") }),
  z.strictObject({ kind: z.literal("task"), task_id: z.string().min(1).max(64) }),
]);

const blueprintNode = z.strictObject({
  id: identifier,
  title: z.string().trim().min(1).max(200),
  description: z.string().max(8000).optional(),
  priority: priority.optional(),
  tags: z.array(z.string().min(1).max(64)).max(20).optional(),
  needs: z.array(z.string()).max(100).default([]),
  foreach: z.strictObject({ from: z.string().min(1).max(300), max_items: z.number().int().min(1).max(50) }).optional(),
  output_schema: z.record(z.string(), z.unknown()).optional(),
  done_check: z.array(blueprintCheck).max(10).optional(),
  gate: blueprintGate.optional(),
  on_fail: z.enum(["stop", "continue", "retry"]).optional(),
  max_attempts: z.number().int().min(1).max(5).optional(),
  assign_to: z.string().min(1).max(200).optional(),
});

/** Nodes a document may hold; checked before any node is parsed, since the parse grows with them. */
export const MAX_BLUEPRINT_NODES = 100;

export const blueprintDocument = z.strictObject({
  name: slug,
  project: slug.nullable().optional(),
  title: z.string().trim().min(1).max(200),
  description: z.string().max(8000).default(""),
  params: z.array(blueprintParam).max(50).default([]),
  nodes: z.array(blueprintNode).min(1).max(MAX_BLUEPRINT_NODES, `at most ${MAX_BLUEPRINT_NODES} nodes`),
});
export type BlueprintDocument = z.output<typeof blueprintDocument>;
export type BlueprintNode = z.output<typeof blueprintNode>;

/** A saved version of a blueprint. */
export const blueprint = z
  .object({
    id: z.uuid(),
    name: z.string(),
    project: z.string().nullable(),
    version: z.number().int().min(1),
    document: z.record(z.string(), z.unknown()).describe("the document as checked, with its defaults filled in"),
    created_by: z.string(),
    created_at: timestamp,
    node_count: z.number().int(),
  })
  .meta({ id: "Blueprint" });
export type Blueprint = z.output<typeof blueprint>;
