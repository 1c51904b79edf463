import { rowColumns } from "./row-columns.js";
import type { Reader, Tx } from "./store.js";
import type { Viewpoint } from "./visibility.js";

export interface FeedRow {
  pk: number;
  id: string;
  project: string | null;
  agent_id: string;
  url: string;
  /** The URL as duplicates are told apart: scheme and host lower case, no fragment. */
  url_key: string;
  name: string;
  /** JSON array. */
  tags: string;
  interval_minutes: number;
  max_items_per_poll: number;
  confidence: number;
  paused: number;
  /** 1 once FEED_FAILURES_TO_FAIL polls in a row have failed, until one succeeds. */
  failing: number;
  /** Polls failed in a row. */
  failures: number;
  last_polled_at: string | null;
  last_success_at: string | null;
  last_error: string | null;
  next_poll_at: string;
  etag: string | null;
  last_modified: string | null;
  items_ingested: number;
  /** 1 once the first poll's rule (only the newest items, the rest marked seen) has been applied. */
  primed: number;
  lease_until: string | null;
  lease_holder: string | null;
  created_at: string;
  updated_at: string;
}

export const FEED_ROW_COLUMNS = rowColumns<FeedRow>("feeds", {
  pk: true, id: true, project: true, agent_id: true, url: true, url_key: true, name: true, tags: true, interval_minutes: true,
  max_items_per_poll: true, confidence: true, paused: true, failing: true, failures: true, last_polled_at: true, last_success_at: true,
  last_error: true, next_poll_at: true, etag: true, last_modified: true, items_ingested: true, primed: true, lease_until: true,
  lease_holder: true, created_at: true, updated_at: true,
}, ["project_key"]);

export type NewFeedRow = Omit<FeedRow, "pk" | "lease_until" | "lease_holder">;

/** What a subscriber may change, and what a poll records. */
export type FeedPatch = Partial<
  Pick<
    FeedRow,
    | "name" | "tags" | "interval_minutes" | "max_items_per_poll" | "confidence" | "paused" | "failing" | "failures" | "last_polled_at"
    | "last_success_at" | "last_error" | "next_poll_at" | "etag" | "last_modified" | "primed" | "updated_at"
  >
>;

/** Subscriptions, their poll schedule and claims, and the item keys each has seen. */
export interface FeedStore {
  insert(tx: Tx, row: NewFeedRow): Promise<number>;
  byId(r: Reader, id: string): Promise<FeedRow | undefined>;
  /** The subscription of `urlKey` in the project (null: global), whoever may see it. */
  byUrl(r: Reader, project: string | null, urlKey: string): Promise<FeedRow | undefined>;
  /** Subscriptions in projects the viewpoint can see (global ones are everyone's), oldest first after `afterPk`. */
  list(r: Reader, viewpoint: Viewpoint, project: string | null | undefined, afterPk: number, limit: number): Promise<FeedRow[]>;
  patch(tx: Tx, pk: number, patch: FeedPatch): Promise<void>;
  delete(tx: Tx, pk: number): Promise<boolean>;
  /**
   * Claims up to `limit` feeds that are due at `nowIso` and not held by a live lease, leasing them
   * to `holder` until `leaseUntil`. Of processes claiming at once each feed goes to one.
   */
  claimDue(tx: Tx, nowIso: string, holder: string, leaseUntil: string, limit: number): Promise<FeedRow[]>;
  /** Leases one feed for a poll on request, unless another poll holds it: the row, or undefined. */
  claimOne(tx: Tx, pk: number, nowIso: string, holder: string, leaseUntil: string): Promise<FeedRow | undefined>;
  /** Ends `holder`'s lease with the poll's outcome; false when the lease was lost (the feed deleted or taken over). */
  finishPoll(tx: Tx, pk: number, holder: string, patch: FeedPatch, ingested: number): Promise<boolean>;
  /** Which of `keys` the feed has seen; marks them seen at `at` as it reads them. */
  seenKeys(tx: Tx, feedPk: number, keys: readonly string[], at: string): Promise<Set<string>>;
  /** Records an item as seen, with the entry it became (null: marked seen without one). */
  recordItem(tx: Tx, feedPk: number, key: string, memoryId: string | null, at: string): Promise<void>;
  /** Forgets item keys not seen in any document since `before`; returns how many. */
  forgetItems(tx: Tx, before: string, limit: number): Promise<number>;
  /** How many subscriptions the project holds (null: global). */
  countInProject(r: Reader, project: string | null): Promise<number>;
}
