import type { MemoryRow, Keyset } from "./memory.js";
import type { Reader } from "./store.js";
import type { Viewpoint } from "./visibility.js";
import type { MemoryType } from "../wire/memory.js";

/**
 * What an outbound feed selects (CONTRACT §15): shared entries the viewpoint may see, never
 * private ones and never directives, narrowed by these filters.
 */
export interface FeedSelection {
  /** null selects global entries only. */
  project?: string | null | undefined;
  tag?: string | undefined;
  type?: MemoryType | undefined;
  agent?: string | undefined;
  sourceKind?: string | undefined;
  /** Only these entries (full ids). */
  ids?: readonly string[] | undefined;
  /** Tombstones too: deleted entries, and expired ones the sweeper has not reached yet. */
  includeDeleted: boolean;
  /** Leave `compiled` entries out (code takes part only when asked for: docs/search.md). */
  excludeCompiled: boolean;
  /**
   * A peer's mesh token reads (CONTRACT §16): only the replicable entries of these projects (and
   * the global ones when it includes them), never a copy suppressed here.
   */
  grant?: { projects: readonly string[]; includeGlobal: boolean } | undefined;
}

/** Where a page starts: after a row of the newest-change-first order, or after a change. */
export type FeedPosition = { order: "updated"; after: Keyset | null } | { order: "changes"; afterSeq: number };

/** An entry as a feed shows it: with its origin (null: this instance). */
export type FeedRow = MemoryRow & { origin: string | null };

export interface MemoryFeedStore {
  /** Up to `limit` rows of the selection from `position`: newest `updated_at` first, or oldest change first by `change_seq`. */
  page(r: Reader, viewpoint: Viewpoint, nowIso: string, selection: FeedSelection, position: FeedPosition, limit: number): Promise<FeedRow[]>;
  /** The highest `change_seq` in the selection (0 when it is empty). */
  newestChange(r: Reader, viewpoint: Viewpoint, nowIso: string, selection: FeedSelection): Promise<number>;
}
