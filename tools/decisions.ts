import { z } from "zod";
import { defineOperation } from "./operation.js";
import { decision } from "../src/wire/decisions.js";
import { cursorParam } from "./schemas.js";
import { idRef, limitParam, projectId, tags } from "../src/wire/fields.js";

const option = z.string().trim().min(1).max(500);

/** An option considered and rejected: `{option, reason_rejected?}`, or the option alone as a plain string. */
const alternative = z
  .union([option, z.strictObject({ option, reason_rejected: z.string().trim().max(2000).nullable().optional() })])
  .transform((value) => (typeof value === "string" ? { option: value } : value));

const decisionRecord = defineOperation({
  name: "decision_record",
  title: "Record a decision",
  description:
    "Record a choice others should build on: the `decision` in a line, its `rationale`, the `alternatives` rejected, the `task_id` it settles, the `memory_refs` it rests on. Never edited: record one that `supersedes` it.",
  kind: "create",
  http: { method: "POST", path: "/decisions" },
  input: z.strictObject({
    decision: z.string().trim().min(1).max(500),
    rationale: z.string().refine((value) => value.trim().length > 0, "must not be empty"),
    alternatives: z.array(alternative).max(20).optional().describe("{option, reason_rejected?} or plain text; up to 20"),
    project: projectId.nullable().optional().describe("default your current project; null: global"),
    task_id: idRef.nullable().optional(),
    memory_refs: z.array(idRef).max(20).optional(),
    tags: tags.optional(),
    supersedes: idRef.nullable().optional().describe("the decision this one replaces"),
  }),
  output: decision,
  errors: ["NOT_FOUND", "FORBIDDEN", "CONFLICT", "PAYLOAD_TOO_LARGE"],
  handle({ services, caller }, input) {
    return services.decisions.record(caller, input);
  },
});

const decisionList = defineOperation({
  name: "decision_list",
  title: "List decisions",
  description:
    "Decisions you can see, newest first: check them before reopening a settled question. `q`: words all in the decision or its rationale.",
  kind: "list",
  http: { method: "GET", path: "/decisions" },
  input: z.strictObject({
    project: projectId.nullable().optional().describe("null (or empty): global decisions"),
    task_id: idRef.optional(),
    agent: z.string().min(1).max(64).optional(),
    tag: z.string().min(1).max(64).optional(),
    q: z.string().min(1).max(500).optional(),
    include_superseded: z.boolean().optional(),
    limit: limitParam(500, 50),
    cursor: cursorParam,
  }),
  output: decision,
  handle({ services, caller }, input) {
    return services.decisions.list(caller, input);
  },
});

const decisionGet = defineOperation({
  name: "decision_get",
  title: "Read a decision",
  description: "One decision by id or unique prefix, with `superseded_by` naming the decision that replaced it, if any.",
  kind: "read",
  http: { method: "GET", path: "/decisions/:id" },
  input: z.strictObject({ id: idRef.describe("decision id or unique prefix") }),
  output: decision,
  errors: ["NOT_FOUND"],
  handle({ services, caller }, input) {
    return services.decisions.get(caller, input.id);
  },
});

export const decisionOperations = [decisionRecord, decisionList, decisionGet];
