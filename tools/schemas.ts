import { z } from "zod";
import { eventTypesDescription } from "./event-types.js";
import { AGENT_ID_PATTERN, roles } from "../src/core/config.js";
import { normalizeTimestamp } from "../src/core/time.js";
import { refuse } from "./validation.js";

/** Shared pieces of the wire format: the same values validate requests and describe responses. */

export const agentId = z.string().regex(AGENT_ID_PATTERN, "must match ^[a-z0-9][a-z0-9_-]{0,63}$");
export const projectId = z
  .string()
  .regex(AGENT_ID_PATTERN, "must be a project id (lower-case slug)")
  .describe("project id (the lower-cased slug of its name)");
export const role = z.enum(roles);

/** Any RFC 3339 time on input, normalised to UTC with milliseconds. */
export const timestampInput = z
  .string()
  .max(64)
  .transform((value, context) => {
    const normalised = normalizeTimestamp(value);
    if (normalised === undefined) {
      context.addIssue({ code: "custom", message: "expected an RFC 3339 timestamp" });
      return z.NEVER;
    }
    return normalised;
  })
  .meta({ format: "date-time" });

/** The version an If-Match value expects (`3`, `"3"`, `W/"3"`), or null when it names none. */
export function parseIfMatch(header: string): number | null {
  const digits = /^\s*(?:W\/)?"?(\d{1,15})"?\s*$/.exec(header)?.[1];
  return digits === undefined ? null : Number(digits);
}

/** An If-Match header as the version it expects; one naming no version is 400, not 422 (CONTRACT §3). */
export const ifMatchVersion = z
  .string()
  .max(64)
  .transform((header, context) => parseIfMatch(header) ?? refuse(context, "BAD_REQUEST", "unparsable if-match header"));

export const timestamp = z.string().meta({ format: "date-time", description: "RFC 3339 UTC with milliseconds" });

export const limitParam = (max: number, fallback: number) =>
  // The default is in the schema itself: repeating it here would only lengthen every tool listing.
  z.number().int().min(1).max(max).default(fallback).describe(`page size, 1 to ${max}`);
export const cursorParam = z.string().min(1).max(512).optional().describe("the next cursor of the previous page");

export const idRef = z
  .string()
  .min(6)
  .max(64)
  .describe("a uuid, or a unique prefix of at least 6 hex characters");

export const memoryType = z.enum(["memory", "doc", "directive", "skill", "compiled"]);
export const scope = z.enum(["agent", "project"]);

export const tags = z
  .array(z.string().trim().min(1).max(64))
  .max(32)
  .describe("up to 32 tags of 1 to 64 characters; trimmed and de-duplicated");

export const content = z
  .string()
  .refine((value) => value.trim().length > 0, "must not be empty")
  .describe("markdown; at most MAX_CONTENT_BYTES bytes");

export const confidence = z.number().min(0).max(1);

export const errorBody = z
  .object({
    detail: z.string(),
    code: z.string(),
    errors: z.array(z.object({ path: z.string(), message: z.string() })).optional(),
  })
  .meta({ id: "Error" });

export const memoryEntry = z
  .object({
    id: z.uuid(),
    type: memoryType,
    agent_id: z.string(),
    project: z.string().nullable(),
    scope,
    content: z.string(),
    confidence,
    parents: z.array(z.string()),
    tags: z.array(z.string()),
    headline: z.string().nullable(),
    created_at: timestamp,
    updated_at: timestamp,
    version: z.number().int(),
    expires_at: timestamp.nullable(),
    read_count: z.number().int(),
    distinct_readers: z.number().int(),
    reinforcement_count: z.number().int(),
    last_reinforced_at: timestamp.nullable(),
    superseded_by: z.string().nullable(),
    embedding_model: z.string().nullable(),
    embedding: z.array(z.number()).optional().describe("only with include_embedding=true"),
  })
  .meta({ id: "MemoryEntry" });

export const similarEntry = z.object({ id: z.uuid(), similarity: z.number(), agent_id: z.string() });

export const memoryWriteResult = memoryEntry
  .extend({
    similar: z.array(similarEntry).optional().describe("a new entry: up to 3 visible entries at or above SIMILAR_THRESHOLD"),
    duplicate_of: z.uuid().optional().describe("a duplicate: the id of the existing entry, which was reinforced and is what you got back"),
    similarity: z.number().optional().describe("a duplicate: its cosine similarity to the content written"),
  })
  .meta({ id: "MemoryWriteResult" });

export const searchHit = memoryEntry
  .extend({
    score: z.number().describe("fused rank score; higher is better"),
    similarity: z.number().nullable().describe("cosine similarity, null for keyword-only hits"),
    match: z.enum(["semantic", "keyword", "both"]),
    truncated: z.literal(true).optional(),
  })
  .meta({ id: "SearchHit" });

export const tombstone = z
  .object({
    id: z.uuid(),
    deleted_at: timestamp,
    updated_at: timestamp,
    version: z.number().int(),
    superseded_by: z.uuid().optional().describe("only when a merge replaced the entry: the merged entry"),
  })
  .meta({ id: "Tombstone" });

export const agentRecord = z
  .object({
    agent_id: z.string(),
    display_name: z.string().nullable(),
    role,
    created_at: timestamp,
    last_seen_at: timestamp.nullable(),
    online: z.boolean(),
    current_project: z.string().nullable().describe("the project it works in; null when global, or a project you are not in"),
    claimed_tasks: z.array(z.string()).describe("ids of the tasks it has claimed that you can see"),
  })
  .meta({ id: "Agent" });

export const eventRecord = z
  .object({
    id: z.uuid(),
    seq: z.number().int(),
    type: z.string().describe(eventTypesDescription()),
    agent_id: z.string(),
    project: z.string().nullable(),
    payload: z.record(z.string(), z.unknown()),
    created_at: timestamp,
  })
  .meta({ id: "Event" });

export const project = z
  .object({
    id: z.string().describe("the lower-cased slug of the name; what every project field holds"),
    name: z.string(),
    description: z.string(),
    owner: z.string().describe("the agent that created it"),
    created_at: timestamp,
    member_count: z.number().int(),
  })
  .meta({ id: "Project" });

export const taskStatus = z.enum(["open", "claimed", "completed", "failed"]);
export const priority = z.enum(["low", "normal", "high"]);

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
  })
  .meta({ id: "Task" });

export const taskComment = z
  .object({
    id: z.uuid(),
    task_id: z.uuid(),
    agent_id: z.string(),
    kind: z.enum(["claim", "unclaim", "complete", "fail", "reopen", "comment"]),
    comment: z.string(),
    created_at: timestamp,
  })
  .meta({ id: "TaskComment" });

export const message = z
  .object({
    id: z.uuid(),
    from: z.string(),
    to: z.string().describe("an agent id, broadcast, or project:<id>"),
    project: z.string().nullable(),
    subject: z.string(),
    body: z.string(),
    read: z.boolean().describe("your own read state"),
    reply_to: z.uuid().nullable(),
    created_at: timestamp,
  })
  .meta({ id: "Message" });

export const comment = z.string().max(8000).describe("recorded in the task's comment log");
