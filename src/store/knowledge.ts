import type { EdgeRel } from "../wire/graph.js";
import type { MemoryType } from "../wire/memory.js";
import type { Reader } from "./store.js";
import type { Viewpoint } from "./visibility.js";

/**
 * An edge as stored: `src rel dst` reads as a sentence, so in `a supersedes b` the entry `a` is
 * the newer one (a decision's `supersedes` names the older decision it replaces, §12), and in
 * `a derived_from b` the entry `a` was made from `b`. A merge's parents take part as
 * `{src: merged, dst: parent, rel: "derived_from"}`. The graph computations count an edge once per
 * `(src, dst, rel)`, so a parent that is also linked by an explicit `derived_from` counts once.
 */
export interface TypedEdge {
  readonly src: string;
  readonly dst: string;
  readonly rel: EdgeRel;
}

/**
 * The shared (`scope=project`) entries a graph computation reads: some projects, with or without
 * the global entries, or everything (an all-seeing caller who named no project).
 */
export interface GraphSelection {
  /** null: every project. */
  projects: string[] | null;
  global: boolean;
  type?: MemoryType | undefined;
  /** Whether `compiled` entries take part when no type is named (docs/search.md: code only when asked for). */
  code?: boolean | undefined;
}

/** A node of a selection, newest change first. */
export interface SelectionNode {
  pk: number;
  id: string;
  /** JSON array of merge parents: `derived_from` edges. */
  parents: string;
  expires_at: string | null;
}

export interface EdgeKey {
  src_pk: number;
  dst_pk: number;
  rel: EdgeRel;
}

export interface NodeLabel {
  pk: number;
  id: string;
  type: MemoryType;
  confidence: number;
  headline: string | null;
  /** The first characters of the content, enough for a label. */
  head: string;
  updated_at: string;
}

export interface HotEntry {
  id: string;
  reads: number;
  readers: number;
}

export interface ConflictEdge {
  id: string;
  src: string;
  dst: string;
  note: string | null;
  created_at: string;
}

export interface PulseCounts {
  entries: number;
  open_tasks: number;
  claimed_tasks: number;
  stale_entries: number;
}

/** One agent's part in a selection's recent work. */
export interface AgentActivityRow {
  agent_id: string;
  writes: number;
  reads: number;
  claimed: number;
  completed: number;
}

export interface TagAffinityRow {
  agent_id: string;
  tag: string;
  count: number;
}

/**
 * The reads behind `related`, `central` and `pulse` (CONTRACT §14). Every entry they return or
 * traverse is live and visible; a selection holds only shared entries, so no private entry ever
 * takes part in central or pulse.
 */
export interface KnowledgeReads {
  /**
   * Visible live edges with an end among `ids`: stored edges, and merge parents as
   * `{src: child, dst: parent, rel: "derived_from"}`. At most `limit`.
   */
  around(r: Reader, viewpoint: Viewpoint, nowIso: string, ids: readonly string[], rels: readonly EdgeRel[] | null, limit: number): Promise<TypedEdge[]>;
  /** The selection's live shared entries, newest change first, at most `limit`. */
  nodes(r: Reader, selection: GraphSelection, nowIso: string, limit: number): Promise<SelectionNode[]>;
  /**
   * Stored edges of the selection's projects by their ends' row keys, at most `limit`. Not checked
   * against the entries: the caller keeps those whose two ends are among the selection's nodes,
   * which is cheaper than joining every edge to both its entries.
   */
  edgeKeys(r: Reader, selection: GraphSelection, limit: number): Promise<EdgeKey[]>;
  /** The last change (an event's seq) to the entries or edges of the selection's projects; 0 when none. */
  changeStamp(r: Reader, selection: GraphSelection): Promise<number>;
  labels(r: Reader, ids: readonly string[]): Promise<NodeLabel[]>;
  counts(r: Reader, selection: GraphSelection, nowIso: string): Promise<PulseCounts>;
  /** Entries of the selection read since `sinceIso`, by reads, then readers. */
  hot(r: Reader, selection: GraphSelection, nowIso: string, sinceIso: string, limit: number): Promise<HotEntry[]>;
  /** Live `contradicts` edges between entries of the selection, newest first. */
  conflicts(r: Reader, selection: GraphSelection, nowIso: string, limit: number): Promise<ConflictEdge[]>;
  /** Per agent: shared writes and reads of the selection's entries, and tasks claimed and completed since `sinceIso`. */
  activity(r: Reader, selection: GraphSelection, sinceIso: string, limit: number): Promise<AgentActivityRow[]>;
  /** How often each agent wrote or read entries with each tag since `sinceIso`. */
  tagUse(r: Reader, selection: GraphSelection, nowIso: string, sinceIso: string, limit: number): Promise<TagAffinityRow[]>;
}
