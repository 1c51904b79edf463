import { forbidden, invalid } from "../../core/errors.js";
import { now } from "../../core/time.js";
import type { EventBus } from "../../events/bus.js";
import { safeUrl } from "../../net/safe-url.js";
import type { MeshLinkRow } from "../../store/mesh.js";
import { ConstraintViolation, type Store, type Tx } from "../../store/store.js";
import type { MeshHandshakeResult, ProjectMapping } from "../../wire/mesh.js";
import type { Caller, MeshGrant } from "../caller.js";
import type { Instance } from "../instance.js";
import { ownersAudience } from "./audience.js";
import { mappingOf, newLinkRow, shownStatus } from "./link-record.js";
import { DEFAULT_INTERVAL_SECONDS, DEFAULT_MAX_CONFIDENCE, MAX_LINKS, peerError, type MeshSettings } from "./links.js";
import { mappingFrom, type MappingInput } from "./mapping.js";
import { normalizePeerUrl, type PeerClient, type PeerGossip } from "./peer-client.js";
import { tokenHint } from "./tokens.js";

export interface HandshakeInput {
  instance_id: string;
  name: string;
  url: string;
  token: string;
  /** From this side's view: `local` ours (within the presenting token), `remote` the caller's. */
  projects?: MappingInput | undefined;
}

/**
 * `POST /mesh/handshake` (CONTRACT §16): a peer that linked to us with one of our tokens asks us to
 * pull from it too. Nothing it says is taken on trust: it is called back at the URL it gives, with
 * the token it gives, and must answer as the instance it claims to be; the link back reaches only
 * what the presenting token already grants, whatever it asks for.
 */
export class MeshHandshakes {
  constructor(
    private readonly store: Store,
    private readonly bus: EventBus,
    private readonly instance: Instance,
    private readonly peers: PeerClient,
    private readonly settings: MeshSettings,
  ) {}

  async accept(caller: Caller, input: HandshakeInput): Promise<MeshHandshakeResult> {
    const grant = caller.mesh;
    // The gateway lets only tokens with the capability in; an agent's credentials never do a handshake.
    if (grant === undefined || !grant.capabilities.includes("handshake")) throw forbidden("a handshake takes a mesh token with the handshake capability");
    if (input.instance_id === this.instance.id) throw invalid("instance_id", "that is this instance", "cannot link this instance to itself");
    const url = normalizePeerUrl(input.url);
    const gossip = await this.peers.gossip(url, input.token).catch((error: unknown) => {
      throw peerError(error, "peer rejected the token");
    });
    if (gossip.instance_id !== input.instance_id) throw forbidden(`handshake not verified: ${safeUrl(url)} answers as another instance`);
    const mapping = await this.scope(grant, input.projects, gossip);
    if (mapping.length === 0) throw forbidden("the presenting token grants none of the projects asked for");
    try {
      return await this.store.transaction((tx) => this.linkBack(tx, caller, url, input.token, gossip, mapping));
    } catch (error) {
      // Two handshakes from one peer at once: the second finds the first's link and refreshes it.
      if (!(error instanceof ConstraintViolation)) throw error;
      return this.store.transaction((tx) => this.linkBack(tx, caller, url, input.token, gossip, mapping));
    }
  }

  /**
   * The presenting token's projects ∩ those asked for (all of them when none are), each also
   * granted by the token the caller gave us, each still a project here. Never wider.
   */
  private async scope(grant: MeshGrant, asked: MappingInput | undefined, gossip: PeerGossip): Promise<ProjectMapping[]> {
    const requested = mappingFrom(asked ?? grant.projects);
    const theirs = gossip.grant?.projects;
    const kept: ProjectMapping[] = [];
    for (const pair of requested) {
      if (!grant.projects.includes(pair.local)) continue;
      if (theirs !== undefined && !theirs.includes(pair.remote)) continue;
      if (!(await this.store.projects.byId(this.store.reader, pair.local))) continue;
      kept.push(pair);
    }
    return kept;
  }

  /** A pull link back, or, when one to that instance exists, its token and URL replaced (its projects kept). */
  private async linkBack(tx: Tx, caller: Caller, url: string, token: string, gossip: PeerGossip, mapping: ProjectMapping[]): Promise<MeshHandshakeResult> {
    const at = now();
    const existing = await this.store.mesh.linkByPeer(tx, gossip.instance_id);
    if (existing) return this.refresh(tx, caller, existing, url, token, gossip);
    if ((await this.store.mesh.countLinks(tx)) >= MAX_LINKS) throw forbidden("this instance holds as many links as it may");
    const row = newLinkRow(this.instance, {
      peer: gossip,
      url,
      label: null,
      mapping,
      direction: "pull",
      intervalSeconds: DEFAULT_INTERVAL_SECONDS,
      maxConfidence: DEFAULT_MAX_CONFIDENCE,
      token,
      nextSyncAt: at,
      antiEntropyHours: this.settings.antiEntropyHours,
      // Which of our tokens let the peer in: the owner revokes that token to end what it started.
      createdBy: caller.agentId,
      at,
    });
    await this.store.mesh.insertLink(tx, row);
    await this.bus.emit(tx, {
      type: "mesh.peer.linked",
      agentId: caller.agentId,
      project: null,
      audience: await ownersAudience(this.store, tx),
      payload: { link_id: row.id, peer_instance_id: row.peer_instance_id, peer_name: row.peer_name, direction: "pull", via: "handshake" },
    });
    return { instance_id: this.instance.id, name: this.instance.name, link_id: row.id, projects: mapping, created: true };
  }

  private async refresh(tx: Tx, caller: Caller, row: MeshLinkRow, url: string, token: string, gossip: PeerGossip): Promise<MeshHandshakeResult> {
    const at = now();
    // A new token ends what the old one's refusal meant; a pause is the owner's and stays.
    const revived = row.status === "unauthorized";
    await this.store.mesh.patchLink(tx, row.pk, {
      url,
      peer_name: gossip.name,
      token_sealed: this.instance.seal(token),
      token_hint: tokenHint(token),
      updated_at: at,
      ...(revived ? { status: "active" as const, failures: 0, last_error: null, next_sync_at: at } : {}),
    });
    const status = shownStatus({ paused: row.paused, status: revived ? "active" : row.status });
    if (status !== shownStatus(row)) {
      await this.bus.emit(tx, {
        type: "mesh.peer.status",
        agentId: caller.agentId,
        project: null,
        audience: await ownersAudience(this.store, tx),
        payload: { link_id: row.id, status, previous: shownStatus(row) },
      });
    }
    return { instance_id: this.instance.id, name: this.instance.name, link_id: row.id, projects: mappingOf(row), created: false };
  }
}
