import type { EventBus } from "../../events/bus.js";
import type { MeshLinkRow } from "../../store/mesh.js";
import type { Store, Tx } from "../../store/store.js";
import { locks } from "../locks.js";
import type { MemoryEmbeddings } from "../memory-embeddings.js";
import { ownersAudience } from "./audience.js";
import type { CopyWrites } from "./copy-writes.js";
import type { Incoming } from "./incoming.js";

/** What applying some items did. */
export interface Applied {
  applied: number;
  skipped: number;
  rejected: number;
  tombstones: number;
  dropped: number;
}

export const noneApplied = (): Applied => ({ applied: 0, skipped: 0, rejected: 0, tombstones: 0, dropped: 0 });

export const addApplied = (total: Applied, more: Applied): void => {
  total.applied += more.applied;
  total.skipped += more.skipped;
  total.rejected += more.rejected;
  total.tombstones += more.tombstones;
  total.dropped += more.dropped;
};

/** `mesh.rejected` events one page may emit; past it, refusals are only counted (a hostile page cannot flood the log). */
const REJECTION_EVENTS_PER_PAGE = 20;

/** The holder lost its claim on the link mid-run: the page is not applied (another sync has it). */
export class LeaseLost extends Error {
  constructor() {
    super("the link's sync lease was lost");
    this.name = "LeaseLost";
  }
}

/** Where a page's cursor goes, applied with it or not at all. */
export interface CursorMove {
  holder: string;
  cursor: number;
}

/**
 * Applies copies by the single-writer rules (CONTRACT §16), a page in one transaction with the
 * link's cursor: an unknown id is inserted; the same origin at a higher version replaces; a lower
 * or equal version is ignored; an id held from another origin (or written here) is refused; an
 * item whose origin is this instance is ignored; a copy suppressed here stays hidden at its
 * version or lower. Vectors are made before the transaction, on the bulk lane.
 */
export class CopyApplier {
  constructor(
    private readonly store: Store,
    private readonly bus: EventBus,
    private readonly copies: CopyWrites,
    private readonly embeddings: MemoryEmbeddings,
    private readonly localOrigin: string,
    /** MAX_ENTRIES_PER_PROJECT (0: no cap): a peer fills a project no further than a writer here could. */
    private readonly maxEntriesPerProject: number,
  ) {}

  async apply(link: MeshLinkRow, page: readonly Incoming[], move: CursorMove | null): Promise<Applied> {
    const items = newestOfEach(page);
    const copies = items.filter((item): item is Extract<Incoming, { kind: "copy" }> => item.kind === "copy");
    const vectors = await this.vectorsOf(copies);
    return this.store.transaction(async (tx) => {
      await tx.lock(locks.meshApply());
      const result = noneApplied();
      const actor = `mesh:${link.id}`;
      const ids = copies.map((item) => item.id);
      const held = await this.store.mesh.heldEntries(tx, ids);
      const suppressed = await this.store.mesh.suppressions(tx, ids);
      const refusals: { id: string | null; reason: string }[] = [];
      const room = this.roomIn(tx);
      for (const item of items) {
        if (item.kind === "dropped") {
          result.dropped++;
          continue;
        }
        if (item.kind === "rejected") {
          refusals.push({ id: item.id, reason: item.reason });
          continue;
        }
        const { copy } = item;
        if (copy.origin === this.localOrigin) {
          result.skipped++;
          continue;
        }
        const current = held.get(item.id);
        if (current !== undefined && (current.origin ?? this.localOrigin) !== copy.origin) {
          refusals.push({ id: item.id, reason: "the id belongs to an entry of another origin" });
          continue;
        }
        const hidden = suppressed.get(item.id);
        if ((current !== undefined && copy.row.version <= current.version) || (hidden !== undefined && copy.row.version <= hidden.version)) {
          result.skipped++;
          continue;
        }
        if (current === undefined && copy.row.deleted_at === null && !(await room.take(copy.row.project))) {
          refusals.push({ id: item.id, reason: `${copy.row.project ?? "global memory"} is full (MAX_ENTRIES_PER_PROJECT)` });
          continue;
        }
        if (hidden !== undefined) await this.store.mesh.unsuppress(tx, item.id);
        const vector = vectors.get(item.id) ?? null;
        if (current === undefined) await this.copies.insert(tx, actor, copy, vector);
        else await this.copies.replace(tx, actor, current, copy, vector);
        if (copy.row.deleted_at !== null) result.tombstones++;
        else result.applied++;
      }
      result.rejected = refusals.length;
      await this.announce(tx, link, refusals);
      if (move !== null) {
        const counts = { applied: result.applied + result.tombstones, rejected: result.rejected, dropped: result.dropped };
        if (!(await this.store.mesh.advanceCursor(tx, link.pk, move.holder, move.cursor, counts))) throw new LeaseLost();
      }
      return result;
    });
  }

  /** Live entries each project may still take in this transaction. */
  private roomIn(tx: Tx): { take(project: string | null): Promise<boolean> } {
    const left = new Map<string, number>();
    return {
      take: async (project) => {
        if (this.maxEntriesPerProject === 0) return true;
        const key = project ?? "";
        let room = left.get(key);
        if (room === undefined) room = this.maxEntriesPerProject - (await this.store.quotas.liveEntries(tx, project));
        left.set(key, room - 1);
        return room > 0;
      },
    };
  }

  private async announce(tx: Tx, link: MeshLinkRow, refusals: readonly { id: string | null; reason: string }[]): Promise<void> {
    if (refusals.length === 0) return;
    const audience = await ownersAudience(this.store, tx);
    for (const refusal of refusals.slice(0, REJECTION_EVENTS_PER_PAGE)) {
      await this.bus.emit(tx, {
        type: "mesh.rejected",
        agentId: `mesh:${link.id}`,
        project: null,
        audience,
        payload: { link_id: link.id, memory_id: refusal.id, reason: refusal.reason.slice(0, 200) },
      });
    }
  }

  /**
   * The vector, by the local model, of each live copy the page will likely apply (null while the
   * model cannot embed: the backfill does it later). Items this instance wrote, and versions held
   * already, are left out on a first read outside the transaction: on a link both ways every entry
   * comes back once from the peer, and embedding it only to skip it cost as much as applying.
   * Whatever the read misses is written without a vector and embedded by the backfill.
   */
  private async vectorsOf(copies: readonly Extract<Incoming, { kind: "copy" }>[]): Promise<Map<string, Float32Array | null>> {
    const held = await this.store.mesh.heldEntries(this.store.reader, copies.map((item) => item.id));
    const live = copies.filter((item) => {
      if (item.copy.row.deleted_at !== null || item.copy.origin === this.localOrigin) return false;
      const current = held.get(item.id);
      return current === undefined || current.version < item.copy.row.version;
    });
    const vectors = await Promise.all(live.map((item) => this.embeddings.embedForBulk(item.copy.row.content)));
    return new Map(live.map((item, index) => [item.id, vectors[index] ?? null]));
  }
}

/** A page names each entry once; one that names an entry twice (no peer of ours would) keeps its highest version. */
function newestOfEach(page: readonly Incoming[]): Incoming[] {
  const best = new Map<string, Extract<Incoming, { kind: "copy" }>>();
  for (const item of page) {
    if (item.kind !== "copy") continue;
    const seen = best.get(item.id);
    if (seen === undefined || item.copy.row.version > seen.copy.row.version) best.set(item.id, item);
  }
  return page.filter((item) => item.kind !== "copy" || best.get(item.id) === item);
}
