import type { BucketStamp } from "../../store/merkle.js";

/** A bucket's hash with what the bucket held when it was computed: its entry count and newest change. */
export interface CachedBucket {
  count: number;
  newest: number;
  hash: string;
}

/**
 * Bucket hashes per project, each valid while the bucket's (count, newest change_seq) is still what
 * it was computed from. Once anything in the bucket changed, that pair never comes back: a change
 * gives its entry a `change_seq` higher than every earlier one (seqs are never reused), and an entry
 * comes into a bucket only by a change. So if the newest change is still the cached one, no entry
 * now in the bucket changed since; the bucket then holds a subset of what it held, and the same
 * count means the same entries, unchanged. Nothing has to be told of a write, so the cache is right
 * on any number of servers sharing one database; membership does not enter into it (a project's
 * replicable selection is the same for everyone who may read it, who may is checked per request).
 */
export class BucketCache {
  private readonly projects = new Map<string, Map<string, CachedBucket>>();

  constructor(private readonly maxProjects: number) {}

  /** The project's buckets (null: the global entries), most recently used last. */
  of(project: string | null): Map<string, CachedBucket> {
    const key = project ?? "";
    let buckets = this.projects.get(key);
    if (buckets) this.projects.delete(key);
    else buckets = new Map();
    this.projects.set(key, buckets);
    for (const oldest of this.projects.keys()) {
      if (this.projects.size <= this.maxProjects) break;
      this.projects.delete(oldest);
    }
    return buckets;
  }
}

export const stillValid = (cached: CachedBucket | undefined, stamp: BucketStamp): cached is CachedBucket =>
  cached !== undefined && cached.count === stamp.count && cached.newest === stamp.newest;
