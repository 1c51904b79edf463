import { z } from "zod";
import { defineOperation, reply } from "./operation.js";
import {
  bulkDeleteResult,
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
import {
  content,
  cursorParam,
  idRef,
  includeCode,
  ifMatchVersion,
  limitParam,
  projectId,
  tags,
  timestampInput,
} from "./schemas.js";

const projectFilter = projectId.nullable().optional().describe("only this project; null (or empty) for global entries");
const includeEmbedding = z.boolean().optional().describe("include the stored embedding vector");

export const memoryWrite = defineOperation({
  name: "memory_write",
  title: "Write a memory entry",
  description:
    "Store a finding, decision or piece of knowledge in shared memory. If a near-identical entry of the same type, " +
    "project and scope exists, nothing new is written: that entry is reinforced and returned with `duplicate_of`. " +
    "Otherwise you get the new entry and `similar` (up to 3 overlapping entries worth reading). `type` is memory " +
    "(default), doc, skill or directive (needs elevated permission, DIRECTIVE_WRITERS). `scope=agent` keeps it " +
    "private to you.",
  kind: "create",
  access: "agent",
  http: {
    method: "POST",
    path: "/memory",
    otherStatuses: [{ status: 200, description: "a duplicate: the existing entry, reinforced, with duplicate_of and similarity" }],
  },
  input: z.strictObject({
    content,
    type: z.enum(["memory", "doc", "directive", "skill"]).optional().describe("default memory"),
    scope: scope.optional().describe("project (default): visible to the project; agent: only you"),
    project: projectId.nullable().optional().describe("omitted: your current project; null: global"),
    tags: tags.optional(),
    confidence: confidence.optional().describe("0 to 1, default 1; always 1 for directives"),
    parents: z.array(z.uuid()).max(32).optional().describe("ids of entries this one derives from"),
    expires_at: timestampInput.nullable().optional().describe("after this time the entry disappears"),
    allow_duplicate: z.boolean().optional().describe("write even when a duplicate exists"),
    source: writableSource.optional().describe("archivist only: a fact distilled from a capture, written as its author's"),
  }),
  output: memoryWriteResult,
  errors: ["FORBIDDEN", "NOT_FOUND", "PAYLOAD_TOO_LARGE", "CONFLICT"],
  handle({ services, caller }, input) {
    return services.memory.write(caller, input);
  },
  respond: (result) => reply(result.entry, { status: result.created ? 201 : 200 }),
});

export const memoryList = defineOperation({
  name: "memory_list",
  title: "List memory entries",
  description:
    "List the entries you can see, newest change first, with filters. Directives are included unless filtered " +
    "out; `type` directive, `scope` project and a `project` read one project's directives.",
  kind: "list",
  access: "agent",
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
    min_version: z.number().int().min(1).optional(),
    min_distinct_readers: z.number().int().min(0).optional(),
    source_kind: sourceKind.optional().describe("only entries with this provenance (capture: distilled from a session by the archivist; compile: describes code)"),
    include_code: includeCode,
    include_embedding: includeEmbedding,
    order: z
      .enum(["recent", "kind"])
      .default("recent")
      .describe("recent: newest change first; kind: directives, then docs, then the rest, each newest change first"),
    limit: limitParam(500, 50),
    cursor: cursorParam,
  }),
  output: memoryEntry,
  handle({ services, caller }, input) {
    return services.memory.list(caller, {
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
  },
});

export const memorySearch = defineOperation({
  name: "memory_search",
  title: "Search memory",
  description:
    "Find entries by meaning and by keywords at once (vector similarity and BM25, fused into one 0-1 score). Search before " +
    "starting work to reuse what the team already knows. Filters apply before ranking, so `limit` is honoured. " +
    "Each hit has `similarity` (cosine, null for keyword-only hits) and `match`. Without an embedding model the " +
    "search is keyword-only.",
  kind: "read",
  access: "agent",
  http: {
    method: "GET",
    path: "/memory/search",
    responseHeaders: { "X-Search-Mode": "hybrid, or keyword when embeddings are unavailable" },
  },
  input: z.strictObject({
    q: z.string().trim().min(1).max(2000).describe("what to look for, in plain words"),
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
  }),
  output: z.array(searchHit),
  async handle({ services, caller }, input) {
    const result = await services.search.search(caller, input);
    return reply(result.hits, { headers: { "X-Search-Mode": result.mode } });
  },
});

export const memoryDelta = defineOperation({
  name: "memory_delta",
  title: "Memory changes since a time",
  description:
    "Entries changed after `since`, oldest first, for keeping a local copy in step. Deleted entries come as " +
    "tombstones `{id, deleted_at, updated_at, version}`.",
  kind: "list",
  access: "agent",
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

export const memoryDirectives = defineOperation({
  name: "memory_directives",
  title: "Standing directives",
  description:
    "Every directive you can see, in loading order: global ones, then project ones, then your private ones " +
    "(later ones win where they disagree). With `project`, only global, that project's and your private ones " +
    "for it. Not paginated.",
  kind: "read",
  access: "agent",
  http: { method: "GET", path: "/memory/directives" },
  input: z.strictObject({ project: projectId.optional() }),
  output: z.array(memoryEntry),
  handle({ services, caller }, input) {
    return services.memory.directives(caller, input.project);
  },
});

export const memoryGet = defineOperation({
  name: "memory_get",
  title: "Read a memory entry",
  description: "One entry by id or unique id prefix. Its `version` is what memory_update takes as `if_match`.",
  kind: "read",
  access: "agent",
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
    "Change an entry's content, tags, confidence, type, scope, project or expiry. Allowed for its author; for " +
    "entries other than directives also for the archivist and owners. With `if_match` (the version you read) a " +
    "change made since is not overwritten: the update is refused. A real change bumps `version`.",
  kind: "update",
  access: "agent",
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

export const memoryDelete = defineOperation({
  name: "memory_delete",
  title: "Delete a memory entry",
  description: "Soft-delete an entry (same permission as update). It disappears from every read; delta reports a tombstone.",
  kind: "delete",
  access: "agent",
  http: { method: "DELETE", path: "/memory/:id" },
  input: z.strictObject({ id: idRef }),
  output: undefined,
  errors: ["NOT_FOUND", "FORBIDDEN"],
  async handle({ services, caller }, input) {
    await services.memory.remove(caller, input.id);
  },
});

export const memoryDeleteMany = defineOperation({
  name: "memory_delete_many",
  title: "Delete several memory entries",
  description: "Soft-delete up to 500 entries at once; reports which were deleted and which were skipped and why.",
  kind: "delete",
  access: "agent",
  http: { method: "DELETE", path: "/memory", status: 200 },
  input: z.strictObject({ ids: z.array(idRef).min(1).max(500) }),
  output: bulkDeleteResult,
  handle({ services, caller }, input) {
    return services.memory.removeMany(caller, input.ids);
  },
});

export const memorySetHeadline = defineOperation({
  name: "memory_set_headline",
  title: "Set an entry's headline",
  description: "Archivist only: set a one-line headline. Does not change the entry's version or updated_at.",
  kind: "update",
  access: "agent",
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
