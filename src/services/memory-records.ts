import { createHash } from "node:crypto";
import { newId } from "../core/ids.js";
import type { MemoryRow, UnsavedMemoryRow } from "../store/memory.js";
import { NO_EXPIRY, ownerKeyFor, visKeyFor, type VectorMeta } from "../store/vectors.js";
import type { CompactWriteResult, EntrySource, MemoryChange, MemoryEntry, MemoryType, Scope, SimilarEntry, StaleReason, Tombstone } from "../wire/memory.js";

/** Scores and similarities go out with six decimals: enough to rank, no float noise. */
export const round6 = (value: number): number => Math.round(value * 1e6) / 1e6;

/** The one mapping from a stored row to the entry clients see (the embedding only when asked for). */
/**
 * Whether a read leaves `compiled` entries out: code takes part in searches, lists and the pulse
 * only when the caller asks for it by type, by provenance or with `include_code`, so that one
 * compile's thousands of entries do not bury what the team decided (docs/search.md).
 */
export const leavesCodeOut = (input: { type?: string | undefined; sourceKind?: string | undefined; includeCode?: boolean | undefined }): boolean =>
  input.type !== "compiled" && input.sourceKind !== "compile" && input.includeCode !== true;

/** A write's answer in compact form (docs/search.md "Budgets"). */
export function compactWrite(written: {
  created: boolean;
  entry: MemoryEntry & { similar?: SimilarEntry[]; duplicate_of?: string; similarity?: number; redactions?: number };
}): CompactWriteResult {
  const { entry } = written;
  return {
    id: entry.id,
    version: entry.version,
    created: written.created,
    ...(entry.duplicate_of === undefined ? {} : { duplicate_of: entry.duplicate_of }),
    ...(entry.similarity === undefined ? {} : { similarity: entry.similarity }),
    ...(entry.similar === undefined || entry.similar.length === 0 ? {} : { similar: entry.similar.map(({ id, similarity }) => ({ id, similarity })) }),
    ...(entry.redactions === undefined ? {} : { redactions: entry.redactions }),
  };
}

export function toEntry(row: MemoryRow, embedding?: Float32Array): MemoryEntry {
  const entry: MemoryEntry = {
    id: row.id,
    type: row.type,
    agent_id: row.agent_id,
    project: row.project,
    scope: row.scope,
    content: row.content,
    confidence: row.confidence,
    parents: JSON.parse(row.parents) as string[],
    tags: JSON.parse(row.tags) as string[],
    headline: row.headline,
    created_at: row.created_at,
    updated_at: row.updated_at,
    version: row.version,
    expires_at: row.expires_at,
    read_count: row.read_count,
    distinct_readers: row.distinct_readers,
    reinforcement_count: row.reinforcement_count,
    last_reinforced_at: row.last_reinforced_at,
    superseded_by: row.superseded_by,
    embedding_model: row.embedding_model,
    source: row.source === null ? null : (JSON.parse(row.source) as EntrySource),
    stale_since: row.stale_since,
    stale_reason: row.stale_reason === null ? null : (JSON.parse(row.stale_reason) as StaleReason),
  };
  if (embedding) entry.embedding = Array.from(embedding);
  return entry;
}

/** A deleted or expired entry as a delta reports it; `superseded_by` only when a merge replaced it. */
const toTombstone = (row: MemoryRow): Tombstone => ({
  id: row.id,
  deleted_at: row.deleted_at ?? row.updated_at,
  updated_at: row.updated_at,
  version: row.version,
  ...(row.superseded_by === null ? {} : { superseded_by: row.superseded_by }),
});

/** A row as a delta shows it at time `at`: the entry, or its tombstone once deleted or expired. */
export const toChange = (row: MemoryRow, at: string): MemoryChange =>
  row.deleted_at !== null || (row.expires_at !== null && row.expires_at <= at) ? toTombstone(row) : toEntry(row);

/** Identity of content for exact-duplicate detection: trimmed, white space collapsed, case-folded. */
export function contentKey(content: string): string {
  const normalised = content.normalize("NFKC").trim().replace(/\s+/gu, " ").toLowerCase();
  return createHash("sha256").update(normalised, "utf8").digest("hex");
}

export function vectorMetaOf(row: Pick<MemoryRow, "scope" | "project" | "agent_id" | "type" | "confidence" | "expires_at">): VectorMeta {
  return {
    visKey: visKeyFor(row.scope, row.project, row.agent_id),
    ownerKey: ownerKeyFor(row.scope, row.agent_id),
    projectKey: row.project ?? "",
    type: row.type,
    agentId: row.agent_id,
    confidence: row.confidence,
    expiresMs: row.expires_at === null ? NO_EXPIRY : Date.parse(row.expires_at),
  };
}

export interface NewEntryFields {
  type: MemoryType;
  project: string | null;
  scope: Scope;
  content: string;
  confidence: number;
  parents: string[];
  tags: string[];
  expiresAt: string | null;
  version?: number;
  source?: EntrySource | null;
}

/** A row for a new entry by `agentId`, created and updated `at`. */
export function newMemoryRow(agentId: string, fields: NewEntryFields, at: string): UnsavedMemoryRow {
  return {
    id: newId(),
    type: fields.type,
    agent_id: agentId,
    project: fields.project,
    scope: fields.scope,
    content: fields.content,
    content_key: contentKey(fields.content),
    confidence: fields.confidence,
    parents: JSON.stringify(fields.parents),
    tags: JSON.stringify(fields.tags),
    headline: null,
    created_at: at,
    updated_at: at,
    version: fields.version ?? 1,
    expires_at: fields.expiresAt,
    read_count: 0,
    distinct_readers: 0,
    reinforcement_count: 0,
    last_reinforced_at: null,
    superseded_by: null,
    embedding_model: null,
    deleted_at: null,
    source: fields.source ? JSON.stringify(fields.source) : null,
    source_kind: fields.source?.kind ?? null,
    stale_since: null,
    stale_reason: null,
  };
}
