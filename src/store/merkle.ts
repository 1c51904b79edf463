import type { Reader, Tx } from "./store.js";

/**
 * What a peer may replicate (CONTRACT §16): shared entries of these types, with their tombstones.
 * Directives, compiled code and private entries never leave; the merkle summary covers exactly
 * this selection (the index `memory_merkle` of migration 018 is built for it).
 */
export const REPLICABLE_TYPES = ["memory", "doc", "skill"] as const;

export interface LeafRow {
  id: string;
  bucket: string;
  leaf: string;
}

/** The merkle leaves stamped on entries at write time, read per project and bucket. */
export interface MerkleStore {
  /** The highest `change_seq` of any entry (0 when there is none): it moves with every change of every entry. */
  latestChange(r: Reader): Promise<number>;
  /**
   * The buckets of entries (of any project) changed after `afterSeq`, at most `limit` of them;
   * null when there are more. An entry's bucket is its id's, wherever the entry now is.
   */
  bucketsChangedSince(r: Reader, afterSeq: number, limit: number): Promise<string[] | null>;
  /** The leaves of `project`'s replicable entries (null: the global ones) in those buckets (every bucket when null), in no order. */
  leaves(r: Reader, project: string | null, buckets: readonly string[] | null): Promise<LeafRow[]>;
  /**
   * Stamps the leaf and bucket of up to `limit` entries that have none (entries written before
   * migration 018, or put in the store by hand); returns how many it stamped.
   */
  stampUnstamped(tx: Tx, localOrigin: string, limit: number): Promise<number>;
}
