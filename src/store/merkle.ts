import type { Reader, Tx } from "./store.js";

/**
 * What a peer may replicate (CONTRACT §16): shared entries of these types, with their tombstones.
 * Directives, compiled code and private entries never leave; the merkle summary covers exactly
 * this selection (the index `memory_merkle` of migration 018 is built for it).
 */
export const REPLICABLE_TYPES = ["memory", "doc", "skill"] as const;

/** One bucket of a project's replicable entries: how many there are, and the newest change among them. */
export interface BucketStamp {
  bucket: string;
  count: number;
  /** The highest `change_seq` in the bucket. */
  newest: number;
}

export interface LeafRow {
  id: string;
  bucket: string;
  leaf: string;
  change_seq: number;
}

/** The merkle leaves stamped on entries at write time, read per project and bucket. */
export interface MerkleStore {
  /** Each non-empty bucket of `project`'s replicable entries (null: the global ones), tombstones included. */
  bucketStamps(r: Reader, project: string | null): Promise<BucketStamp[]>;
  /** The leaves in those buckets of the same selection (every bucket when `buckets` is null), in no order. */
  leaves(r: Reader, project: string | null, buckets: readonly string[] | null): Promise<LeafRow[]>;
  /**
   * Stamps the leaf and bucket of up to `limit` entries that have none (entries written before
   * migration 018, or put in the store by hand); returns how many it stamped.
   */
  stampUnstamped(tx: Tx, localOrigin: string, limit: number): Promise<number>;
}
