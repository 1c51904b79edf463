import { z } from "zod";
import { timestamp } from "./timestamp.js";

// Memory entries as the API returns them, and the shapes built around them (writes, search hits,
// tombstones of deleted entries).

export const memoryType = z.enum(["memory", "doc", "directive", "skill", "compiled"]);
export type MemoryType = z.output<typeof memoryType>;

export const scope = z.enum(["agent", "project"]);
export type Scope = z.output<typeof scope>;

export const confidence = z.number().min(0).max(1);

/**
 * Where an entry came from when no agent wrote it by hand (CONTRACT §11). An entry with a source
 * is never a directive. Feeds, compile and mesh add their kinds as they arrive.
 */
const captureSource = z.object({ kind: z.literal("capture"), capture_id: z.uuid() });
/** A `compiled` entry's code (§18): the anchor it describes, at the sha and commit it was compiled from. */
const compileSource = z.object({
  kind: z.literal("compile"),
  path: z.string(),
  symbol: z.string().describe('"" for a module or file'),
  sha: z.string(),
  commit: z.string().nullable(),
});
/** An item of a subscribed feed (§15): `url` is the item's own link, `guid` the key it is known by. */
const feedSource = z.object({
  kind: z.literal("feed"),
  feed_id: z.uuid(),
  url: z.string().nullable().describe("the item's link"),
  guid: z.string().describe("the item's guid, else its link, else a hash of its title and date"),
});
/** A copy of a peer's entry (§16): `origin` is the instance it was written on, `link_id` the link that brought it. */
const meshSource = z.object({
  kind: z.literal("mesh"),
  origin: z.string(),
  origin_name: z.string(),
  link_id: z.string(),
});
export type MeshSource = z.output<typeof meshSource>;
export const entrySource = z.discriminatedUnion("kind", [captureSource, compileSource, feedSource, meshSource]).meta({ id: "EntrySource" });
export type EntrySource = z.output<typeof entrySource>;
export type CaptureSource = z.output<typeof captureSource>;
/** The one provenance a write may name (the archivist's, for a capture's facts); compile writes its own. */
export const writableSource = captureSource.meta({ id: "CaptureSource" });
export type CompileSource = z.output<typeof compileSource>;
export type FeedSource = z.output<typeof feedSource>;
export const sourceKind = z.enum(["capture", "compile", "feed", "mesh"]);
export type SourceKind = z.output<typeof sourceKind>;

/** Why compile marked an entry stale (§18): the code it is about changed from `old_sha` to `new_sha`. */
export const staleReason = z
  .object({ path: z.string(), symbol: z.string(), old_sha: z.string(), new_sha: z.string() })
  .meta({ id: "StaleReason" });
export type StaleReason = z.output<typeof staleReason>;

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
    source: entrySource.nullable().describe("where the entry came from; null when an agent wrote it"),
    stale_since: timestamp.nullable().describe("when compile found the code the entry is about changed; null while it is fresh"),
    stale_reason: staleReason.nullable().describe("which code changed, from which sha to which; null while fresh"),
    embedding: z.array(z.number()).optional().describe("only with include_embedding=true"),
  })
  .meta({ id: "MemoryEntry" });
export type MemoryEntry = z.output<typeof memoryEntry>;

/** An entry close to one just written, shown so the writer can read it. */
const similarEntry = z.object({ id: z.uuid(), similarity: z.number(), agent_id: z.string() });
export type SimilarEntry = z.output<typeof similarEntry>;

const redactionCount = z
  .number()
  .int()
  .min(1)
  .optional()
  .describe("secrets replaced by [REDACTED:<kind>] in the content (and tags that were secrets, dropped) before it was stored; absent when none");

export const memoryWriteResult = memoryEntry
  .extend({
    similar: z.array(similarEntry).optional().describe("a new entry: up to 3 visible entries at or above SIMILAR_THRESHOLD"),
    duplicate_of: z.uuid().optional().describe("a duplicate: the id of the existing entry, which was reinforced and is what you got back"),
    similarity: z.number().optional().describe("a duplicate: its cosine similarity to the content written"),
    redactions: redactionCount,
  })
  .meta({ id: "MemoryWriteResult" });
export type MemoryWriteResult = z.output<typeof memoryWriteResult>;

export const searchHit = memoryEntry
  .extend({
    score: z.number().describe("fused relevance, 0..1 (1: the query's own text); higher is better"),
    similarity: z.number().nullable().describe("cosine similarity, null for keyword-only hits"),
    match: z.enum(["semantic", "keyword", "both"]),
    truncated: z.literal(true).optional(),
  })
  .meta({ id: "SearchHit" });
export type SearchHit = z.output<typeof searchHit>;

/** A hit as MCP answers by default and REST with `compact=true` (docs/search.md "Budgets"). */
export const compactHit = z
  .object({
    id: z.uuid(),
    type: memoryType,
    score: z.number().optional().describe("fused relevance, 0..1"),
    age: z.string().describe("since its last change: now, 5m, 3h, 2d, 6w, 4mo, 2y"),
    headline: z.string().describe("its headline, or its first line"),
    snippet: z.string().optional().describe("the words around what matched, when the headline does not show them all"),
  })
  .meta({ id: "CompactHit" });
export type CompactHit = z.output<typeof compactHit>;

/** A write's answer in compact form: what the writer needs, not the record it sent. */
export const compactWriteResult = z
  .object({
    id: z.uuid(),
    version: z.number().int(),
    created: z.boolean().describe("false: a duplicate, reinforced instead"),
    duplicate_of: z.uuid().optional(),
    similarity: z.number().optional(),
    similar: z.array(z.object({ id: z.uuid(), similarity: z.number() })).optional(),
    redactions: redactionCount,
  })
  .meta({ id: "CompactWriteResult" });
export type CompactWriteResult = z.output<typeof compactWriteResult>;

/** What a deleted (or expired) entry leaves behind in a delta. */
export const tombstone = z
  .object({
    id: z.uuid(),
    deleted_at: timestamp,
    updated_at: timestamp,
    version: z.number().int(),
    superseded_by: z.uuid().optional().describe("only when a merge replaced the entry: the merged entry"),
  })
  .meta({ id: "Tombstone" });
export type Tombstone = z.output<typeof tombstone>;

/** One change in a delta: the entry as it is now, or its tombstone. */
export const memoryChange = z.union([memoryEntry, tombstone]);
export type MemoryChange = z.output<typeof memoryChange>;

export const bulkDeleteResult = z.object({
  deleted: z.array(z.uuid()),
  skipped: z.array(z.object({ id: z.string(), reason: z.string() })),
});
export type BulkDeleteResult = z.output<typeof bulkDeleteResult>;
