import { now } from "../../core/time.js";
import type { Store } from "../../store/store.js";
import type { MeshDiscovered } from "../../wire/mesh.js";
import type { AdvertisedPeer } from "./mdns-txt.js";

/** Peers unheard of for this long are forgotten. */
const DISCOVERED_RETENTION_DAYS = 7;
/** Suggestions kept at most, the most recently seen: a noisy network cannot grow the table. */
export const DISCOVERED_MAX = 500;

/**
 * Cairn instances heard of on the local network or named by a peer's gossip (CONTRACT §16): only
 * suggestions for the owner, never links. This instance itself is never one.
 */
export class DiscoveredPeers {
  constructor(
    private readonly store: Store,
    private readonly selfId: string,
  ) {}

  /** Notes that `peer` was heard of now, `via` "mdns" or "gossip:<instance id>"; false for this instance. */
  async record(peer: AdvertisedPeer, via: string): Promise<boolean> {
    if (peer.instance_id === this.selfId) return false;
    await this.store.transaction((tx) => this.store.mesh.upsertDiscovered(tx, { ...peer, via, last_seen_at: now() }));
    return true;
  }

  /** Most recently seen first, each with whether a link to it exists. */
  async list(): Promise<MeshDiscovered[]> {
    const rows = await this.store.mesh.listDiscovered(this.store.reader, DISCOVERED_MAX);
    const linked = await this.store.mesh.linkedPeers(
      this.store.reader,
      rows.map((row) => row.instance_id),
    );
    return rows.map((row) => ({ ...row, linked: linked.has(row.instance_id) }));
  }

  /** Forgets what was not heard of for DISCOVERED_RETENTION_DAYS, and all but the DISCOVERED_MAX most recent. */
  prune(at: number = Date.now()): Promise<number> {
    const before = new Date(at - DISCOVERED_RETENTION_DAYS * 86_400_000).toISOString();
    return this.store.transaction((tx) => this.store.mesh.pruneDiscovered(tx, before, DISCOVERED_MAX));
  }
}
