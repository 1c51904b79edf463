import type { MemoryType, Scope } from "../wire/memory.js";
import type { IdRef } from "../core/ids.js";
import { rowColumns } from "./row-columns.js";
import type { Reader, Tx } from "./store.js";
import type { Viewpoint } from "./visibility.js";

export interface MemoryRow {
  pk: number;
  id: string;
  type: MemoryType;
  agent_id: string;
  project: string | null;
  scope: Scope;
  content: string;
  content_key: string;
  confidence: number;
  parents: string;
  tags: string;
  headline: string | null;
  created_at: string;
  updated_at: string;
  version: number;
  expires_at: string | null;
  read_count: number;
  distinct_readers: number;
  reinforcement_count: number;
  last_reinforced_at: string | null;
  superseded_by: string | null;
  embedding_model: string | null;
  deleted_at: string | null;
  /** Provenance as JSON (null for entries written by hand), and its kind for filtering. */
  source: string | null;
  source_kind: string | null;
  /** Set by compile when the code the entry is about changed (§18), with the reason as JSON; null while fresh. */
  stale_since: string | null;
  stale_reason: string | null;
  /** The seq of the event of the entry's last change: changes in commit order. */
  change_seq: number;
}

export const MEMORY_ROW_COLUMNS = rowColumns<MemoryRow>("memory", {
  pk: true, id: true, type: true, agent_id: true, project: true, scope: true, content: true, content_key: true, confidence: true, parents: true, tags: true,
  headline: true, created_at: true, updated_at: true, version: true, expires_at: true, read_count: true, distinct_readers: true, reinforcement_count: true,
  last_reinforced_at: true, superseded_by: true, embedding_model: true, deleted_at: true, source: true, source_kind: true, stale_since: true, stale_reason: true,
  change_seq: true,
}, ["origin", "merkle_leaf", "merkle_bucket"]);

/** An entry as a writer makes it: the store gives it its row key, and its first change its `change_seq`. */
export type UnsavedMemoryRow = Omit<MemoryRow, "pk" | "change_seq">;

export type NewMemoryRow = Omit<
  MemoryRow,
  "pk" | "read_count" | "distinct_readers" | "reinforcement_count" | "last_reinforced_at" | "superseded_by" | "headline" | "deleted_at" | "stale_since" | "stale_reason" | "change_seq"
>;

export interface MemoryFilters {
  type?: MemoryType | undefined;
  tag?: string | undefined;
  agent?: string | undefined;
  /** null selects global entries only. */
  project?: string | null | undefined;
  scope?: Scope | undefined;
  confidenceMin?: number | undefined;
  updatedBefore?: string | undefined;
  createdBefore?: string | undefined;
  minVersion?: number | undefined;
  minDistinctReaders?: number | undefined;
  sourceKind?: string | undefined;
  /** Leave `compiled` entries out (code takes part only when asked for: docs/search.md). */
  excludeCompiled?: boolean | undefined;
}

export interface Keyset {
  at: string;
  pk: number;
}

/** How a listing is ordered: newest change first, or by kind (directives, docs, the rest) and then so. */
export type MemoryOrder = "recent" | "kind";

/** The kind order: directives first, then docs, then everything else (one rank after these). */
export const KIND_ORDER: readonly MemoryType[] = ["directive", "doc"];

/** The kind order's rank (the SQL listing writes the same order from `KIND_ORDER`). */
export const kindRank = (type: string): number => {
  const rank = KIND_ORDER.indexOf(type as MemoryType);
  return rank === -1 ? KIND_ORDER.length : rank;
};

export interface DuplicateKey {
  type: MemoryType;
  project: string | null;
  scope: Scope;
  agentId: string;
  contentKey: string;
}

export const MEMORY_PATCHABLE_COLUMNS = [
  "content",
  "content_key",
  "tags",
  "confidence",
  "type",
  "scope",
  "project",
  "expires_at",
  "updated_at",
  "version",
  "embedding_model",
  "headline",
  "last_reinforced_at",
  "reinforcement_count",
  "deleted_at",
  "superseded_by",
  "stale_since",
  "stale_reason",
  "source",
] as const;

export type MemoryPatch = { [Column in (typeof MEMORY_PATCHABLE_COLUMNS)[number]]?: MemoryRow[Column] | undefined };

export interface ReadRecord {
  pk: number;
  agentId: string;
  at: string;
  context: string | null;
}

/** Memory entries. "Live" means not deleted and not expired at `nowIso`. */
export interface MemoryStore {
  insert(tx: Tx, row: NewMemoryRow, tags: string[]): Promise<number>;
  replaceTags(tx: Tx, pk: number, tags: string[]): Promise<void>;
  byPk(r: Reader, pk: number): Promise<MemoryRow | undefined>;
  /**
   * The same, locked until the transaction ends (where transactions overlap), in key order: for
   * changes made from what was read (a compile's rewrite of its entries must wait for a delete of
   * one of them, then see it deleted).
   */
  lockByPks(tx: Tx, pks: number[]): Promise<Map<number, MemoryRow>>;
  byPks(r: Reader, pks: number[]): Promise<Map<number, MemoryRow>>;
  /** Live entries visible to `viewpoint` by full id or prefix (at most 2 returned). */
  findLive(r: Reader, viewpoint: Viewpoint, nowIso: string, match: IdRef): Promise<MemoryRow[]>;
  /** The entry a visible, merged-away entry was merged into (null when it was not merged, or is not visible). */
  mergedInto(r: Reader, viewpoint: Viewpoint, id: string): Promise<string | null>;
  list(
    r: Reader,
    viewpoint: Viewpoint,
    nowIso: string,
    filters: MemoryFilters,
    after: (Keyset & { rank?: number | undefined }) | null,
    limit: number,
    order?: MemoryOrder,
  ): Promise<MemoryRow[]>;
  /** Entries changed after `since`, oldest first, deleted ones included (the caller makes tombstones). */
  delta(
    r: Reader,
    viewpoint: Viewpoint,
    since: string,
    filters: Pick<MemoryFilters, "agent" | "project" | "type">,
    after: Keyset | null,
    limit: number,
  ): Promise<MemoryRow[]>;
  /** Visible live directives: global, then project-scoped (by project), then the caller's private ones. */
  directives(r: Reader, viewpoint: Viewpoint, nowIso: string, project: string | undefined, limit: number): Promise<MemoryRow[]>;
  /** A live entry with the same normalised content, type, project and scope (same author if private). */
  exactDuplicate(r: Reader, key: DuplicateKey, nowIso: string): Promise<MemoryRow | undefined>;
  /** The newest event's seq (0 if none) and whether `exactDuplicate` would find an entry, read together: where a write's survey begins. */
  surveyStart(r: Reader, key: DuplicateKey, nowIso: string): Promise<{ mark: number; duplicate: boolean }>;
  patch(tx: Tx, pk: number, patch: MemoryPatch): Promise<void>;
  /** Counts reads: `read_count` per read, `distinct_readers` once per agent. */
  recordReads(tx: Tx, reads: ReadRecord[]): Promise<void>;
  /** Live-but-expired entries (deleted_at still null) whose `expires_at` is not after `nowIso`. */
  expired(r: Reader, nowIso: string, limit: number): Promise<MemoryRow[]>;
  /** Entries not deleted that have no vector yet, in row order. */
  unembedded(r: Reader, limit: number): Promise<MemoryRow[]>;
  unembeddedCount(r: Reader): Promise<number>;
  /** Entries not deleted after row key `afterPk`, in row order. */
  notDeletedAfter(r: Reader, afterPk: number, limit: number): Promise<MemoryRow[]>;
  /** Which of `ids` name entries (live or deleted) that `viewpoint` may see. */
  visibleIds(r: Reader, viewpoint: Viewpoint, ids: string[]): Promise<Set<string>>;
  /** A project's shared entries not deleted (private entries stay their authors'). */
  projectShared(r: Reader, project: string): Promise<MemoryRow[]>;
  /** Visible entries but compiled ones whose last change came after `afterSeq`, in the order the changes committed. */
  changesSince(r: Reader, viewpoint: Viewpoint, afterSeq: number, limit: number): Promise<MemoryRow[]>;
}

/** BM25's parameters, the same on both backends (FTS5's fixed ones). */
export const BM25_K1 = 1.2;
export const BM25_B = 0.75;

/** A word's inverse document frequency as FTS5's bm25() computes it, never quite zero. */
export const bm25Idf = (documents: number, withWord: number): number => Math.max(1e-6, Math.log((documents - withWord + 0.5) / (withWord + 0.5)));

export interface KeywordMatches {
  /** Best first; `score` is the entry's Okapi BM25 for the query (higher is better). */
  hits: { pk: number; score: number }[];
  /**
   * What an entry that holds each of the query's words once, at average length, would score: the
   * sum of the words' idf. A hit's score over it says how much of the query it answers, which
   * makes scores comparable across queries (a word no entry holds still counts, at the highest idf).
   */
  ceiling: number;
}

/** The keyword index over content and tags, kept in step with the entries by the store itself. */
export interface KeywordIndex {
  /**
   * Visible live entries matching the query's words, best first by BM25, with visibility and
   * filters applied inside the query. `words` are plain words, already stripped of syntax; any one
   * of them may match.
   */
  search(r: Reader, viewpoint: Viewpoint, nowIso: string, words: string[], filters: MemoryFilters, limit: number): Promise<KeywordMatches>;
}
