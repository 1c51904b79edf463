import type { MemoryRow } from "./memory.js";
import { rowColumns } from "./row-columns.js";
import type { Reader, Tx } from "./store.js";
import type { Viewpoint } from "./visibility.js";

/** One piece of compiled code (CONTRACT §18) and the `compiled` entry that describes it. */
export interface AnchorRow {
  pk: number;
  project: string | null;
  path: string;
  /** "" for a module or file unit. */
  symbol: string;
  kind: string;
  lang: string;
  start_line: number;
  end_line: number;
  sha: string;
  /** The sha before the last change; null until it changed once. */
  previous_sha: string | null;
  signature: string | null;
  memory_pk: number;
  /** The commit the current sha was compiled at, when the client named one. */
  git_commit: string | null;
  created_at: string;
  updated_at: string;
}

/** `project_key` (the project, or '' for global code) exists for the unique key. */
export const ANCHOR_ROW_COLUMNS = rowColumns<AnchorRow>(
  "compile_anchors",
  {
    pk: true, project: true, path: true, symbol: true, kind: true, lang: true, start_line: true, end_line: true, sha: true, previous_sha: true,
    signature: true, memory_pk: true, git_commit: true, created_at: true, updated_at: true,
  },
  ["project_key"],
);

export type NewAnchorRow = Omit<AnchorRow, "pk">;

/** What an anchor's row may have changed. */
export type AnchorChange = Partial<Pick<AnchorRow, "kind" | "lang" | "start_line" | "end_line" | "sha" | "previous_sha" | "signature" | "memory_pk" | "git_commit" | "updated_at">>;

/** An anchor with its entry's id, as lists show it. */
export type ListedAnchor = AnchorRow & { memory_id: string };

/** Where a list of anchors continues: after this path and symbol. */
export interface AnchorKey {
  path: string;
  symbol: string;
}

/** An entry a changed anchor reaches, with the id of the compiled entry it is reached from. */
export type ReachedEntry = MemoryRow & { via_id: string };

/**
 * Compile's anchors, per project (null: global code), and the reads over entries and edges that
 * staleness needs. Who may ask is the service's to decide; an anchor is readable only through a
 * project the caller may see.
 */
export interface CompileStore {
  /** The anchor's current sha, whatever became of its entry; null when there is none (blueprint `anchor_changed` checks). */
  anchorSha(r: Reader, project: string | null, path: string, symbol: string): Promise<string | null>;
  /** Every anchor at these exact paths. */
  anchorsAt(r: Reader, project: string | null, paths: readonly string[]): Promise<AnchorRow[]>;
  /** Every anchor at these paths or under them as directories (`a/b` covers `a/b` and `a/b/…`). */
  anchorsUnder(r: Reader, project: string | null, paths: readonly string[]): Promise<AnchorRow[]>;
  /** For each of `symbols`, the project's anchor of that symbol when it is the only one (a name in two files names neither). */
  onlyAnchorsNamed(r: Reader, project: string | null, symbols: readonly string[]): Promise<AnchorRow[]>;
  /** Anchors with a live entry, by path then symbol, after `after`; `path` exact or `pathPrefix` a prefix. */
  list(r: Reader, project: string | null, filters: { path?: string | undefined; pathPrefix?: string | undefined }, nowIso: string, after: AnchorKey | null, limit: number): Promise<ListedAnchor[]>;
  /** How many anchors the project has. */
  count(r: Reader, project: string | null): Promise<number>;
  insert(tx: Tx, row: NewAnchorRow): Promise<number>;
  update(tx: Tx, pk: number, change: AnchorChange): Promise<void>;
  remove(tx: Tx, pks: readonly number[]): Promise<void>;
  /** Deletes a project's anchors (its memory was cleared); returns how many. */
  deleteProject(tx: Tx, project: string): Promise<number>;
  /** Live entries that the compiled entries `ids` ground (`grounds` edges from them). */
  grounded(r: Reader, ids: readonly string[], nowIso: string): Promise<ReachedEntry[]>;
  /** Live compiled entries that depend on the compiled entries `ids` (`depends_on` edges to them). */
  dependents(r: Reader, ids: readonly string[], nowIso: string): Promise<ReachedEntry[]>;
  /** Removes the `depends_on` edges leaving entry `srcPk` towards any entry not in `keepIds`. */
  dropDependsOn(tx: Tx, srcPk: number, keepIds: readonly string[]): Promise<void>;
  /** Live stale entries of a project (null: global) that `viewpoint` may see, oldest mark first. */
  stale(r: Reader, viewpoint: Viewpoint, project: string | null, nowIso: string, after: { at: string; pk: number } | null, limit: number): Promise<MemoryRow[]>;
}
