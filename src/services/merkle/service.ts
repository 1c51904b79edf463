import { notFound } from "../../core/errors.js";
import type { LeafRow } from "../../store/merkle.js";
import type { Store } from "../../store/store.js";
import type { MerkleBucket, MerkleSummary } from "../../wire/merkle.js";
import { seesAllProjects, type Caller } from "../caller.js";
import { BucketCache, stillValid, type CachedBucket } from "./cache.js";
import { bucketHash, byText, rootHash } from "./hashes.js";

/** Projects whose bucket hashes are kept (least recently asked for go first): 256 buckets each at most. */
const CACHED_PROJECTS = 128;
/** Entries stamped per transaction when leaves are missing (after the upgrade that added them). */
const STAMP_BATCH = 2000;

/**
 * The merkle summary of a project's replicable entries (CONTRACT §15): a peer compares roots,
 * then buckets, then leaves, to find what its copy lacks. Leaves are stamped on the entries by the
 * transaction of each change (MemoryWrites); here they are only grouped and hashed.
 */
export class MerkleSummaries {
  private readonly cache = new BucketCache(CACHED_PROJECTS);

  constructor(
    private readonly store: Store,
    private readonly localOrigin: string,
  ) {}

  /** Stamps every entry that has no leaf yet; returns how many. Runs at start, before any summary is read. */
  async stampUnstamped(): Promise<number> {
    let stamped = 0;
    for (;;) {
      const done = await this.store.transaction((tx) => this.store.merkle.stampUnstamped(tx, this.localOrigin, STAMP_BATCH));
      stamped += done;
      if (done < STAMP_BATCH) return stamped;
    }
  }

  async summary(caller: Caller, project: string | null): Promise<MerkleSummary> {
    await this.checkReach(caller, project);
    const reader = this.store.reader;
    const stamps = await this.store.merkle.bucketStamps(reader, project);
    const cached = this.cache.of(project);
    const stale = stamps.filter((stamp) => !stillValid(cached.get(stamp.bucket), stamp)).map((stamp) => stamp.bucket);
    if (stale.length > 0) {
      const rows = await this.store.merkle.leaves(reader, project, stale.length === stamps.length ? null : stale);
      for (const bucket of stale) cached.delete(bucket);
      for (const [bucket, computed] of hashBuckets(rows)) cached.set(bucket, computed);
    }
    const present = new Set(stamps.map((stamp) => stamp.bucket));
    for (const bucket of cached.keys()) if (!present.has(bucket)) cached.delete(bucket);
    // A bucket re-read after a write that came between the two reads is shown as that read found
    // it (its cache entry says so); one that emptied in between is left out.
    const buckets = [...present]
      .sort(byText)
      .flatMap((bucket) => {
        const entry = cached.get(bucket);
        return entry === undefined ? [] : [{ bucket, ...entry }];
      });
    return {
      project,
      root: rootHash(buckets),
      count: buckets.reduce((sum, bucket) => sum + bucket.count, 0),
      buckets: Object.fromEntries(buckets.map(({ bucket, hash }) => [bucket, hash])),
    };
  }

  async bucket(caller: Caller, project: string | null, bucket: string): Promise<MerkleBucket> {
    await this.checkReach(caller, project);
    const rows = await this.store.merkle.leaves(this.store.reader, project, [bucket]);
    rows.sort((a, b) => byText(a.id, b.id));
    return { project, bucket, entries: Object.fromEntries(rows.map((row) => [row.id, row.leaf])) };
  }

  /** Global entries are everyone's; a project is its members' and the all-seeing roles' (404 otherwise, as for anything unseen). */
  private async checkReach(caller: Caller, project: string | null): Promise<void> {
    if (project === null) return;
    const reachable = seesAllProjects(caller.role)
      ? (await this.store.projects.byId(this.store.reader, project)) !== undefined
      : await this.store.projects.isMember(this.store.reader, project, caller.agentId);
    if (!reachable) throw notFound("project");
  }
}

/** The buckets' hashes, each with the count and newest change of exactly the rows it was computed from. */
function hashBuckets(rows: readonly LeafRow[]): Map<string, CachedBucket> {
  const grouped = new Map<string, LeafRow[]>();
  for (const row of rows) {
    const group = grouped.get(row.bucket);
    if (group) group.push(row);
    else grouped.set(row.bucket, [row]);
  }
  const hashed = new Map<string, CachedBucket>();
  for (const [bucket, group] of grouped) {
    const newest = group.reduce((top, row) => Math.max(top, row.change_seq), 0);
    hashed.set(bucket, { count: group.length, newest, hash: bucketHash(group) });
  }
  return hashed;
}
