import type { Logger } from "../../core/log.js";
import { packageVersion } from "../../core/paths.js";
import { now } from "../../core/time.js";
import type { MeshLinkRow } from "../../store/mesh.js";
import type { Store } from "../../store/store.js";
import type { MeshGossip } from "../../wire/mesh.js";
import type { Caller } from "../caller.js";
import type { Instance } from "../instance.js";
import { mappingOf } from "./link-record.js";
import { MAX_LINKS } from "./links.js";
import { normalizePeerUrl, PeerCallError, type PeerClient, type PeerRef } from "./peer-client.js";

/** Suggestions taken from one peer's answer: a peer that names thousands fills nothing. */
const PEERS_PER_ANSWER = 100;
/** Suggestions kept at most, and how long one lasts unseen. */
const KEEP_DISCOVERED = 1000;
const FORGET_AFTER_MS = 7 * 86400_000;

/**
 * `GET /mesh/gossip` and the gossip round (CONTRACT §16). A peer learns who we are and which of our
 * peers share a project with its token; every 5 minutes we ask our peers the same, and what they
 * name goes to `mesh_discovered` as a suggestion. Nothing links itself.
 */
export class MeshGossipService {
  constructor(
    private readonly store: Store,
    private readonly instance: Instance,
    private readonly site: { url: string },
    private readonly peers: PeerClient,
    private readonly log: Logger,
  ) {}

  async answer(caller: Caller): Promise<MeshGossip> {
    const grant = caller.mesh;
    const links = await this.store.mesh.listLinks(this.store.reader, 0, MAX_LINKS);
    const shared = grant === undefined ? links : links.filter((link) => mappingOf(link).some((pair) => grant.projects.includes(pair.local)));
    return {
      instance_id: this.instance.id,
      name: this.instance.name,
      url: this.site.url.replace(/\/+$/, ""),
      version: packageVersion,
      peers: shared.map((link) => ({ instance_id: link.peer_instance_id, name: link.peer_name, url: link.url })),
      grant: grant === undefined ? null : { projects: [...grant.projects], include_global: grant.includeGlobal },
    };
  }

  /** Asks every link that is neither paused nor refused whom it knows. One peer failing is logged and passed over. */
  async round(): Promise<void> {
    const links = await this.store.mesh.listLinks(this.store.reader, 0, MAX_LINKS);
    for (const link of links) {
      if (!this.store.open) return;
      if (link.paused === 1 || link.status === "unauthorized") continue;
      await this.ask(link);
    }
    const before = new Date(Date.now() - FORGET_AFTER_MS).toISOString();
    await this.store.transaction((tx) => this.store.mesh.pruneDiscovered(tx, before, KEEP_DISCOVERED));
  }

  private async ask(link: MeshLinkRow): Promise<void> {
    const token = this.instance.open(link.token_sealed);
    if (token === null) return;
    let named: PeerRef[];
    try {
      const gossip = await this.peers.gossip(link.url, token);
      // A URL that now answers as someone else vouches for nobody.
      if (gossip.instance_id !== link.peer_instance_id) return;
      named = gossip.peers.slice(0, PEERS_PER_ANSWER);
    } catch (error) {
      if (!(error instanceof PeerCallError)) throw error;
      this.log.info("gossip with a peer failed", { link_id: link.id, reason: error.message });
      return;
    }
    const at = now();
    for (const peer of named) {
      if (peer.instance_id === this.instance.id) continue;
      let url: string;
      try {
        url = normalizePeerUrl(peer.url);
      } catch {
        continue;
      }
      await this.store.transaction(async (tx) => {
        if (await this.store.mesh.linkByPeer(tx, peer.instance_id)) return;
        await this.store.mesh.upsertDiscovered(tx, { instance_id: peer.instance_id, name: peer.name, url, via: `gossip:${link.peer_instance_id}`, last_seen_at: at });
      });
    }
  }
}
