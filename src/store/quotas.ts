import type { Reader, Tx } from "./store.js";

/** How a charge against a bucket came out; `retryAfterSeconds` when it did not fit. */
export type QuotaCharge = { granted: true } | { granted: false; retryAfterSeconds: number };

/**
 * What the quotas count, in the store, so that every server sharing it counts the same (CONTRACT
 * §20): token buckets per agent and quota, and the counts the caps compare against.
 */
export interface QuotaStore {
  /**
   * Takes `cost` from the agent's `quota` bucket (holding at most `capacity`, refilled evenly over
   * `windowMs`) when the bucket holds that much, in one statement; says whether it did, and if not,
   * how long until it would. `cost` must not exceed `capacity`.
   */
  charge(tx: Tx, agentId: string, quota: string, cost: number, capacity: number, windowMs: number, nowMs: number): Promise<QuotaCharge>;
  /** Forgets buckets untouched since `beforeMs` (full again by then, the same as none); returns how many. */
  prune(tx: Tx, beforeMs: number): Promise<number>;
  /** Live entries (not deleted) of a project, or of global memory for null. */
  liveEntries(r: Reader, project: string | null): Promise<number>;
  /** The agent's live entries that have no vector yet: its share of the embedding backlog. */
  unembeddedBy(r: Reader, agentId: string): Promise<number>;
}
