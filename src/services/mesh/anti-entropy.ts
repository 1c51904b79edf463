import { z } from "zod";
import { safeUrl } from "../../net/safe-url.js";
import type { MeshLinkRow } from "../../store/mesh.js";
import type { ProjectMapping } from "../../wire/mesh.js";
import type { MerkleSummaries } from "../merkle/service.js";
import { addApplied, noneApplied, type Applied, type CopyApplier } from "./apply.js";
import { incomingOf, type LinkTerms } from "./incoming.js";
import { mappingOf } from "./link-record.js";
import { peerPage } from "./page.js";
import { IDS_PER_REQUEST, PeerFailure, type PullClient, type PullTarget } from "./pull.js";

const HEX = /^[0-9a-f]{64}$/;
const summaryShape = z.object({ root: z.string().regex(HEX), buckets: z.record(z.string().regex(/^[0-9a-f]{2}$/), z.string().regex(HEX)) });
const bucketShape = z.object({ entries: z.record(z.uuid(), z.string().regex(HEX)) });

/** Ids one comparison fetches at most: a peer far behind catches up by its feed, not by this. */
const MAX_REPAIRED_IDS = 20_000;

export interface Repair extends Applied {
  /** Requests made and bytes they brought. */
  requests: number;
  bytes: number;
  /** Projects whose roots differed. */
  differing: number;
}

/**
 * Anti-entropy (CONTRACT §16): per mapped project, the peer's merkle root against this instance's;
 * where they differ, the buckets that differ; in those, the ids whose leaves differ or that only the
 * peer has; those entries are fetched by id and applied by the ordinary rules, without moving the
 * cursor. So a copy that lost data, was restored from a backup or was edited behind Cairn's back
 * converges, at the cost of one summary per project when nothing differs.
 */
export class AntiEntropy {
  constructor(
    private readonly pull: PullClient,
    private readonly merkle: MerkleSummaries,
    private readonly applier: CopyApplier,
  ) {}

  async run(link: MeshLinkRow, target: PullTarget, terms: LinkTerms, extendLease: () => Promise<void>): Promise<Repair> {
    const repair: Repair = { ...noneApplied(), requests: 0, bytes: 0, differing: 0 };
    for (const mapping of mappingOf(link)) {
      const ids = await this.differingIds(target, mapping, repair);
      for (let start = 0; start < ids.length; start += IDS_PER_REQUEST) {
        const chunk = ids.slice(start, start + IDS_PER_REQUEST);
        const pulled = await this.pull.byIds(target, chunk);
        repair.requests++;
        repair.bytes += pulled.bytes;
        if (pulled.body === null) break;
        const page = peerPage(pulled.body, target.url, link.peer_instance_id, chunk.length);
        addApplied(repair, await this.applier.apply(link, page.items.map((raw) => incomingOf(raw, terms)), null));
        await extendLease();
      }
    }
    return repair;
  }

  private async differingIds(target: PullTarget, mapping: ProjectMapping, repair: Repair): Promise<string[]> {
    const remote = await this.pull.merkle(target, mapping.remote);
    repair.requests++;
    repair.bytes += remote.bytes;
    // A project the token no longer reaches: nothing to compare (the feed says the rest).
    if (remote.body === null) return [];
    const theirs = summaryShape.safeParse(remote.body);
    if (!theirs.success) throw new PeerFailure(`${safeUrl(target.url)} answered with something that is not a merkle summary`);
    const ours = await this.merkle.summaryOf(mapping.local, true);
    if (theirs.data.root === ours.root) return [];
    repair.differing++;
    const buckets = new Set([...Object.keys(theirs.data.buckets), ...Object.keys(ours.buckets)]);
    const ids: string[] = [];
    for (const bucket of [...buckets].sort()) {
      if (theirs.data.buckets[bucket] === ours.buckets[bucket]) continue;
      // Only the peer's entries can be fetched; ours that it lacks are its sync's to pull.
      if (theirs.data.buckets[bucket] === undefined) continue;
      const pulled = await this.pull.merkle(target, mapping.remote, bucket);
      repair.requests++;
      repair.bytes += pulled.bytes;
      if (pulled.body === null) return ids;
      const leaves = bucketShape.safeParse(pulled.body);
      if (!leaves.success) throw new PeerFailure(`${safeUrl(target.url)} answered with something that is not a merkle bucket`);
      const local = (await this.merkle.bucketOf(mapping.local, bucket)).entries;
      for (const [id, leaf] of Object.entries(leaves.data.entries)) {
        if (local[id] !== leaf) ids.push(id);
        if (ids.length >= MAX_REPAIRED_IDS) return ids;
      }
    }
    return ids;
  }
}
