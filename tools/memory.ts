import { z } from "zod";
import { defineOperation, reply } from "./operation.js";
import { compactWrite } from "../src/services/memory-records.js";
import { compactEntry } from "../src/services/compact-entries.js";
import {
  bulkDeleteResult,
  compactHit,
  compactWriteResult,
  confidence,
  memoryChange,
  memoryEntry,
  memoryType,
  memoryWriteResult,
  scope,
  searchHit,
  sourceKind,
  writableSource,
} from "../src/wire/memory.js";
import { content, compactFlag, cursorParam, includeCode, maxTokens, ifMatchVersion } from "./schemas.js";
import { idRef, limitParam, projectId, storedCount, tags } from "../src/wire/fields.js";
import { timestampInput } from "../src/wire/timestamp.js";

const projectFilter = projectId.nullable().optional().describe("only this project; null (or empty): global entries");
const includeEmbedding = z.boolean().optional().describe("include the stored embedding vector");

export const memoryWrite = defineOperation({
  name: "memory_write",
  title: "Write a memory entry",
  description:
    "Save what you learned for the team. A near-identical entry (same type, project and scope) is reinforced instead and returned, with `duplicate_of`; a new entry comes with `similar` entries worth reading. `scope=agent` keeps it private. Secrets are stored as `[REDACTED:<kind>]`.",
  kind: "create",
  http: {
    method: "POST",
    path: "/memory",
    otherStatuses: [{ status: 200, description: "a duplicate: the existing entry, reinforced, with duplicate_of and similarity" }],
  },
  input: z.strictObject({
    content,
    type: z.enum(["memory", "doc", "directive", "skill"]).optional().describe("default memory; directive needs DIRECTIVE_WRITERS"),
    scope: scope.optional().describe("default project"),
    project: projectId.nullable().optional().describe("default: your current project; null: global"),
    tags: tags.optional(),
    confidence: confidence.optional().describe("0-1, default 1"),
    parents: z.array(z.uuid()).max(32).optional().describe("ids of entries it derives from"),
    expires_at: timestampInput.nullable().optional().describe("when it disappears"),
    allow_duplicate: z.boolean().optional().describe("write even if a duplicate exists"),
    source: writableSource.optional().describe("archivist only: a fact distilled from a capture, written as its author's"),
    compact: compactFlag.describe("answer with {id, version, created, duplicate_of?, similarity?, similar?, redactions?} instead of the entry"),
  }),
  output: z.union([memoryWriteResult, compactWriteResult]),
  errors: ["FORBIDDEN", "NOT_FOUND", "PAYLOAD_TOO_LARGE", "CONFLICT"],
  handle({ services, caller }, input) {
    const { compact: _form, ...write } = input;
    return services.memory.write(caller, write);
  },
  respond: (written, input) => reply(input.compact === true ? compactWrite(written) : written.entry, { status: written.created ? 201 : 200 }),
});

const memoryList = defineOperation({
  name: "memory_list",
  title: "List memory entries",
  description:
    "Entries you can see, newest change first. Compiled code is left out unless `include_code`.",
  kind: "list",
  http: { method: "GET", path: "/memory" },
  input: z.strictObject({
    type: memoryType.optional(),
    tag: z.string().min(1).max(64).optional(),
    agent: z.string().min(1).max(64).optional().describe("author"),
    project: projectFilter,
    scope: scope.optional(),
    confidence_min: confidence.optional(),
    updated_before: timestampInput.optional(),
    created_before: timestampInput.optional(),
    min_version: storedCount(1).optional(),
    min_distinct_readers: storedCount(0).optional(),
    source_kind: sourceKind.optional().describe("only entries with this provenance (capture: distilled from a session by the archivist; compile: describes code)"),
    include_code: includeCode,
    include_embedding: includeEmbedding,
    order: z
      .enum(["recent", "kind"])
      .default("recent")
      .describe("recent: newest change first; kind: directives, then docs, then the rest, each newest change first"),
    limit: limitParam(500, 50),
    cursor: cursorParam,
    compact: compactFlag.describe("each entry as {id, type, age, headline, snippet?}"),
  }),
  output: z.union([memoryEntry, compactHit]),
  async handle({ services, caller }, input) {
    const page = await services.memory.list(caller, {
      type: input.type,
      tag: input.tag,
      agent: input.agent,
      project: input.project,
      scope: input.scope,
      confidenceMin: input.confidence_min,
      updatedBefore: input.updated_before,
      createdBefore: input.created_before,
      minVersion: input.min_version,
      minDistinctReaders: input.min_distinct_readers,
      sourceKind: input.source_kind,
      includeCode: input.include_code,
      includeEmbedding: input.include_embedding,
      order: input.order,
      cursor: input.cursor,
      limit: input.limit,
    });
    if (input.compact !== true) return page;
    const nowMs = Date.now();
    return { ...page, items: page.items.map((entry) => compactEntry(entry, "", null, nowMs)) };
  },
});

const memorySearch = defineOperation({
  name: "memory_search",
  title: "Search memory",
  description:
    "Search shared memory by meaning and keywords, best first (`score` 0-1). Search before starting work. Compiled code is left out unless `include_code`.",
  kind: "read",
  http: {
    method: "GET",
    path: "/memory/search",
    responseHeaders: {
      "X-Search-Mode": "hybrid, or keyword when embeddings are unavailable",
      "X-Left-Out": "with max_tokens: how many hits qualified but did not fit",
    },
  },
  input: z.strictObject({
    q: z.string().trim().min(1).max(2000).describe("in plain words"),
    limit: limitParam(100, 10),
    project: projectFilter,
    tag: z.string().min(1).max(64).optional(),
    type: memoryType.optional(),
    agent: z.string().min(1).max(64).optional().describe("author"),
    max_distance: z.number().min(0).max(2).optional().describe("cosine distance bound (1 - similarity); drops keyword-only hits"),
    confidence_min: confidence.optional(),
    source_kind: sourceKind.optional().describe("only entries with this provenance"),
    include_code: includeCode,
    max_content_length: z.number().int().min(1).max(1_000_000).optional().describe("truncate content to this many characters"),
    diversify: z.boolean().optional().describe("re-rank with maximal marginal relevance to avoid near-duplicates"),
    context: z.string().max(200).optional().describe("a free label recorded with the read (what the search was for)"),
    include_embedding: includeEmbedding,
    compact: compactFlag.describe("each hit as {id, type, score, age, headline, snippet?}"),
    max_tokens: maxTokens,
  }),
  output: z.array(z.union([searchHit, compactHit])),
  async handle({ services, caller }, input) {
    const result = await services.search.search(caller, input);
    const headers: Record<string, string> = { "X-Search-Mode": result.mode };
    if (input.max_tokens !== undefined) headers["X-Left-Out"] = String(result.leftOut);
    return reply(result.hits, { headers });
  },
});

const memoryDelta = defineOperation({
  name: "memory_delta",
  title: "Memory changes since a time",
  description:
    "Entries changed after `since`, oldest first, for keeping a local copy in step. Deleted entries come as " +
    "tombstones `{id, deleted_at, updated_at, version}`.",
  kind: "list",
  http: { method: "GET", path: "/memory/delta" },
  input: z.strictObject({
    since: timestampInput,
    agent: z.string().min(1).max(64).optional(),
    project: projectFilter,
    type: memoryType.optional(),
    limit: limitParam(500, 50),
    cursor: cursorParam,
  }),
  output: memoryChange,
  handle({ services, caller }, input) {
    return services.memory.delta(caller, input);
  },
});

const memoryDirectives = defineOperation({
  name: "memory_directives",
  title: "Standing directives",
  description:
    "Every directive you can see, in loading order: global ones, then project ones, then your private ones " +
    "(later ones win where they disagree). With `project`, only global, that project's and your private ones " +
    "for it. Not paginated.",
  kind: "read",
  http: { method: "GET", path: "/memory/directives" },
  input: z.strictObject({ project: projectId.optional() }),
  output: z.array(memoryEntry),
  handle({ services, caller }, input) {
    return services.memory.directives(caller, input.project);
  },
});

const memoryGet = defineOperation({
  name: "memory_get",
  title: "Read a memory entry",
  description:
    "One entry by id or unique prefix. Its `version` is memory_update's `if_match`.",
  kind: "read",
  http: { method: "GET", path: "/memory/:id", responseHeaders: { ETag: 'the entry version, quoted: "3"' } },
  input: z.strictObject({
    id: idRef,
    include_embedding: includeEmbedding,
    context: z.string().max(200).optional().describe("a free label recorded with the read"),
  }),
  output: memoryEntry,
  errors: ["NOT_FOUND"],
  async handle({ services, caller }, input) {
    const entry = await services.memory.get(caller, input.id, { includeEmbedding: input.include_embedding, context: input.context });
    return reply(entry, { headers: { ETag: `"${entry.version}"` } });
  },
});

export const memoryUpdate = defineOperation({
  name: "memory_update",
  title: "Update a memory entry",
  description:
    "Change an entry: its author, or the archivist or an owner (not a directive). With `if_match` (the version you read) it is refused if changed since.",
  kind: "update",
  http: { method: "PATCH", path: "/memory/:id", headers: { if_match: "if-match" } },
  input: z.strictObject({
    id: idRef,
    if_match: ifMatchVersion.optional().describe('expected version, e.g. "3"'),
    content: content.optional(),
    tags: tags.optional(),
    confidence: confidence.optional(),
    type: memoryType.optional(),
    scope: scope.optional(),
    project: projectId.nullable().optional(),
    expires_at: timestampInput.nullable().optional(),
  }),
  output: memoryEntry,
  errors: ["NOT_FOUND", "FORBIDDEN", "PRECONDITION_FAILED", "PAYLOAD_TOO_LARGE", "CONFLICT"],
  handle({ services, caller }, input) {
    const { id, if_match: expected, ...patch } = input;
    return services.memory.update(caller, id, patch, expected);
  },
});

const memoryDelete = defineOperation({
  name: "memory_delete",
  title: "Delete a memory entry",
  description:
    "Delete an entry (the same rights as update); delta reports a tombstone.",
  kind: "delete",
  http: { method: "DELETE", path: "/memory/:id" },
  input: z.strictObject({ id: idRef }),
  output: undefined,
  errors: ["NOT_FOUND", "FORBIDDEN"],
  async handle({ services, caller }, input) {
    await services.memory.remove(caller, input.id);
  },
});

const memoryDeleteMany = defineOperation({
  name: "memory_delete_many",
  title: "Delete several memory entries",
  description: "Soft-delete up to 500 entries at once; reports which were deleted and which were skipped and why.",
  kind: "delete",
  http: { method: "DELETE", path: "/memory", status: 200 },
  input: z.strictObject({ ids: z.array(idRef).min(1).max(500) }),
  output: bulkDeleteResult,
  handle({ services, caller }, input) {
    return services.memory.removeMany(caller, input.ids);
  },
});

const memorySetHeadline = defineOperation({
  name: "memory_set_headline",
  title: "Set an entry's headline",
  description: "Archivist only: set a one-line headline. Does not change the entry's version or updated_at.",
  kind: "update",
  roles: ["archivist"],
  http: { method: "PATCH", path: "/memory/:id/headline" },
  input: z.strictObject({ id: idRef, headline: z.string().trim().min(1).max(300).nullable() }),
  output: memoryEntry,
  errors: ["NOT_FOUND"],
  handle({ services, caller }, input) {
    return services.memory.setHeadline(caller, input.id, input.headline);
  },
});

export const memoryOperations = [
  memoryWrite,
  memoryList,
  memorySearch,
  memoryDelta,
  memoryDirectives,
  memoryGet,
  memoryUpdate,
  memoryDelete,
  memoryDeleteMany,
  memorySetHeadline,
];
