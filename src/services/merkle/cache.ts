/** A bucket's hash, and how many entries it was computed from. */
export interface BucketHash {
  count: number;
  hash: string;
}

/**
 * A project's bucket hashes as of a point in the change order: every change of an entry with a
 * `change_seq` up to `asOf` is in them. Never changed once made: a newer state is a new object.
 */
export interface ProjectHashes {
  asOf: number;
  buckets: ReadonlyMap<string, BucketHash>;
}

/**
 * The newest hashes of each project (least recently asked for dropped first). Whether they are
 * still right is for the reader to check against the change order (MerkleSummaries); here they are
 * only kept, and replaced only by hashes derived from the very state they replace, so two requests
 * computing at once never put back what the other had moved past.
 */
export class HashCache {
  private readonly projects = new Map<string, ProjectHashes>();

  constructor(private readonly maxProjects: number) {}

  private static key(project: string | null): string {
    return project ?? "";
  }

  get(project: string | null): ProjectHashes | undefined {
    const key = HashCache.key(project);
    const hashes = this.projects.get(key);
    if (hashes) {
      this.projects.delete(key);
      this.projects.set(key, hashes);
    }
    return hashes;
  }

  /** Stores `next` in place of `base` (undefined: of nothing); false when another state took its place meanwhile. */
  replace(project: string | null, base: ProjectHashes | undefined, next: ProjectHashes): boolean {
    const key = HashCache.key(project);
    if (this.projects.get(key) !== base) return false;
    this.projects.delete(key);
    this.projects.set(key, next);
    for (const oldest of this.projects.keys()) {
      if (this.projects.size <= this.maxProjects) break;
      this.projects.delete(oldest);
    }
    return true;
  }
}
