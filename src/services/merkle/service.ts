import { notFound } from "../../core/errors.js";
import type { LeafRow } from "../../store/merkle.js";
import type { Store } from "../../store/store.js";
import type { MerkleBucket, MerkleSummary } from "../../wire/merkle.js";
import { grantReaches, seesAllProjects, type Caller } from "../caller.js";
import { HashCache, type BucketHash, type ProjectHashes } from "./cache.js";
import { bucketHash, byText, rootHash } from "./hashes.js";

/** Projects whose bucket hashes are kept (least recently asked for go first): 256 buckets each at most. */
const CACHED_PROJECTS = 128;
/** Past this many changed buckets (an eighth), a summary hashes every bucket again in one read. */
const CHANGED_BUCKETS_LIMIT = 32;
/** Entries stamped per transaction when leaves are missing (after the upgrade that added them). */
const STAMP_BATCH = 2000;

/**
 * The merkle summary of a project's replicable entries (CONTRACT §15): a peer compares roots,
 * then buckets, then leaves, to find what its copy lacks. Leaves are stamped on the entries by the
 * transaction of each change (MemoryWrites); here they are only grouped and hashed.
 *
 * Bucket hashes are kept per project as of a point in the change order (`asOf`), and brought up
 * to date from it: every change of an entry, in whatever project, takes a `change_seq` higher than
 * any before, and changes become visible in that order. So when the newest `change_seq` is still
 * `asOf`, nothing changed and the hashes stand; otherwise only the buckets of the entries changed
 * since are hashed again (an entry's bucket is its id's, so one that left the project names the
 * bucket it left). Nothing has to be told of a write, so this is right with any number of servers
 * on one database; and membership does not enter into it (a project's replicable selection is the
 * same for everyone who may read it; who may is checked per request).
 */
export class MerkleSummaries {
  private readonly cache = new HashCache(CACHED_PROJECTS);

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
    return this.summaryOf(project);
  }

  async bucket(caller: Caller, project: string | null, bucket: string): Promise<MerkleBucket> {
    await this.checkReach(caller, project);
    return this.bucketOf(project, bucket);
  }

  /**
   * The summary as this instance holds it, for its own comparisons with a peer's. `fresh`: hashed
   * from the leaves as they are now, not brought up to date from the cache, which only knows of
   * changes Cairn made (anti-entropy is for the others: a restored backup, rows changed by hand).
   */
  async summaryOf(project: string | null, fresh = false): Promise<MerkleSummary> {
    const hashes: ProjectHashes = fresh
      ? { asOf: 0, buckets: hashBuckets(await this.store.merkle.leaves(this.store.reader, project, null)) }
      : await this.current(project);
    const buckets = [...hashes.buckets].map(([bucket, { count, hash }]) => ({ bucket, count, hash })).sort((a, b) => byText(a.bucket, b.bucket));
    return {
      project,
      root: rootHash(buckets),
      count: buckets.reduce((sum, bucket) => sum + bucket.count, 0),
      buckets: Object.fromEntries(buckets.map(({ bucket, hash }) => [bucket, hash])),
    };
  }

  async bucketOf(project: string | null, bucket: string): Promise<MerkleBucket> {
    const rows = await this.store.merkle.leaves(this.store.reader, project, [bucket]);
    rows.sort((a, b) => byText(a.id, b.id));
    return { project, bucket, entries: Object.fromEntries(rows.map((row) => [row.id, row.leaf])) };
  }

  /**
   * The project's hashes with every change up to now in them. The newest change is read before
   * anything else: every change up to it has committed by then, so the reads after see it; one
   * that commits later is newer than `asOf` and is taken in next time.
   */
  private async current(project: string | null): Promise<ProjectHashes> {
    const reader = this.store.reader;
    const base = this.cache.get(project);
    const asOf = await this.store.merkle.latestChange(reader);
    if (base?.asOf === asOf) return base;
    const changed = base === undefined ? null : await this.store.merkle.bucketsChangedSince(reader, base.asOf, CHANGED_BUCKETS_LIMIT);
    let buckets: Map<string, BucketHash>;
    if (base === undefined || changed === null) {
      buckets = hashBuckets(await this.store.merkle.leaves(reader, project, null));
    } else {
      buckets = new Map(base.buckets);
      for (const bucket of changed) buckets.delete(bucket);
      if (changed.length > 0) for (const [bucket, hash] of hashBuckets(await this.store.merkle.leaves(reader, project, changed))) buckets.set(bucket, hash);
    }
    const next: ProjectHashes = { asOf, buckets };
    // Derived from `base`: stored only if no other request replaced it meanwhile (its answer stands either way).
    this.cache.replace(project, base, next);
    return next;
  }

  /**
   * Global entries are everyone's; a project is its members' and the all-seeing roles' (404
   * otherwise, as for anything unseen); a peer's, when its token grants it.
   */
  private async checkReach(caller: Caller, project: string | null): Promise<void> {
    if (caller.mesh !== undefined) {
      // A peer reaches the projects its token names (and the global entries only when it says so).
      if (!grantReaches(caller.mesh, project)) throw notFound("project");
      return;
    }
    if (project === null) return;
    const reachable = seesAllProjects(caller.role)
      ? (await this.store.projects.byId(this.store.reader, project)) !== undefined
      : await this.store.projects.isMember(this.store.reader, project, caller.agentId);
    if (!reachable) throw notFound("project");
  }
}

/** Each non-empty bucket's hash and entry count. */
function hashBuckets(rows: readonly LeafRow[]): Map<string, BucketHash> {
  const grouped = new Map<string, LeafRow[]>();
  for (const row of rows) {
    const group = grouped.get(row.bucket);
    if (group) group.push(row);
    else grouped.set(row.bucket, [row]);
  }
  return new Map([...grouped].map(([bucket, group]) => [bucket, { count: group.length, hash: bucketHash(group) }]));
}
