import type { Reader, Tx } from "./store.js";
import type { Viewpoint } from "./visibility.js";

/** Far beyond any real expiry: the `expiresMs` of an entry that never expires. */
export const NO_EXPIRY = 8_640_000_000_000_000;

/** What the vector index keeps beside each vector, so a scan can apply every filter itself. */
export interface VectorMeta {
  /** `g` global, `p:<project>`, or `a:<author>` for a private entry. */
  visKey: string;
  /** The author of a private entry, '' otherwise (for roles that see every project). */
  ownerKey: string;
  /** '' for global. */
  projectKey: string;
  type: string;
  agentId: string;
  confidence: number;
  /** Epoch milliseconds, NO_EXPIRY when none. */
  expiresMs: number;
}

export interface VectorFilter {
  /** The rows a viewpoint may see, or only those of one visibility key (a duplicate's scope). */
  within: { viewpoint: Viewpoint } | { visKey: string };
  projectKey?: string;
  /** Allowed types. */
  types?: string[];
  agentId?: string;
  confidenceMin?: number;
  nowMs: number;
  maxDistance?: number;
  tag?: string;
  excludePk?: number;
  /**
   * Nearly the nearest will do, for a fraction of the cost: SQLite's bit mirror then scans only
   * the partition's lists nearest to the vector, and ranks exactly only as many candidates as
   * asked for (a write's neighbourhood; never a search, whose recall is measured against exact).
   * Other indexes answer as they always do.
   */
  coarse?: boolean;
}

export interface Neighbour {
  pk: number;
  /** Cosine distance. */
  distance: number;
}

export interface IndexModel {
  model: string;
  dimensions: number;
}

export const visKeyFor = (scope: string, project: string | null, agentId: string): string =>
  scope === "agent" ? `a:${agentId}` : project === null ? "g" : `p:${project}`;
export const ownerKeyFor = (scope: string, agentId: string): string => (scope === "agent" ? agentId : "");

/** An in-memory index of the vectors: none, being built (or loaded), or answering. */
export type IndexStatus = "off" | "building" | "ready";

/** Embeddings of memory entries, keyed by the entry's row key. Soft-deleted entries have none. */
export interface VectorIndex {
  /** An approximate index this backend keeps beside the vectors in the process (SQLite's HNSW), if any. */
  readonly annStatus?: IndexStatus;
  /** The in-memory copy of the vectors that answers the bit scan (SQLite's bit mirror), if any. */
  readonly mirrorStatus?: IndexStatus;
  /** Starts building what the index keeps in this thread's memory, in the background (a server, once it serves). */
  warm?(): void;
  /** The model whose vectors the index holds; null before one was set. */
  model(r: Reader): Promise<IndexModel | null>;
  /**
   * Makes the index match the model. A different model, dimension or layout empties it and marks
   * every entry unembedded, so the backfill re-embeds everything. Runs its own transaction.
   */
  ensure(model: string, dimensions: number): Promise<"unchanged" | "created" | "reset">;
  put(tx: Tx, pk: number, vector: Float32Array, meta: VectorMeta): Promise<void>;
  updateMeta(tx: Tx, pk: number, meta: VectorMeta): Promise<void>;
  delete(tx: Tx, pk: number): Promise<void>;
  get(r: Reader, pks: number[]): Promise<Map<number, Float32Array>>;
  /** Moves an agent's rows to its new id (author, and a private entry's owner and visibility key), inside the caller's transaction. */
  renameAgent(tx: Tx, from: string, to: string): Promise<void>;
  /**
   * The `k` nearest rows the filter's viewpoint may see, by cosine distance, with every filter applied
   * before `k` counts.
   */
  nearest(r: Reader, vector: Float32Array, k: number, filter: VectorFilter): Promise<Neighbour[]>;
}
