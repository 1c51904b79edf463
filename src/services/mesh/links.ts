import { AppError, invalid, notFound } from "../../core/errors.js";
import { addSeconds, now } from "../../core/time.js";
import type { EventBus } from "../../events/bus.js";
import type { MeshLinkPatch, MeshLinkRow, NewMeshLinkRow } from "../../store/mesh.js";
import { ConstraintViolation, type Store, type Tx } from "../../store/store.js";
import type { MeshLink, ProjectMapping } from "../../wire/mesh.js";
import type { Caller } from "../caller.js";
import type { Instance } from "../instance.js";
import { decodeCursor, pageOf, type Page } from "../paging.js";
import { ownersAudience } from "./audience.js";
import { meshLinkOf, newLinkRow, shownStatus } from "./link-record.js";
import { checkLocalProjects, inverted, mappingFrom, type MappingInput } from "./mapping.js";
import { normalizePeerUrl, PeerCallError, type PeerClient, type PeerGossip } from "./peer-client.js";
import type { MeshTokens } from "./tokens.js";

export const DEFAULT_INTERVAL_SECONDS = 300;
export const DEFAULT_MAX_CONFIDENCE = 0.8;
/** Links an instance holds at most: each costs a sync every interval. */
export const MAX_LINKS = 200;
/**
 * A link made both ways is not synced until its handshake is through: were the handshake to fail,
 * the link is removed, and copies a sync had applied under it meanwhile would be left orphaned.
 */
const HANDSHAKE_HOLD_SECONDS = 120;

export interface LinkInput {
  url: string;
  token: string;
  projects?: MappingInput | undefined;
  direction?: "pull" | "both" | undefined;
  interval_seconds?: number | undefined;
  max_confidence?: number | undefined;
  label?: string | undefined;
}

export interface LinkChanges {
  paused?: boolean | undefined;
  interval_seconds?: number | undefined;
  max_confidence?: number | undefined;
  label?: string | null | undefined;
  projects?: MappingInput | undefined;
}

export interface MeshSettings {
  antiEntropyHours: number;
}

const isPkCursor = (value: unknown): value is { pk: number } => Number.isSafeInteger((value as { pk?: unknown } | null)?.pk);

/** 409 naming the link that already joins this instance to the peer. */
const alreadyLinked = (id: string): AppError => new AppError("CONFLICT", `already linked to that peer (link ${id})`, { extra: { id } });

/**
 * Links to peers (CONTRACT §16): made by the owner with a token the peer minted, checked against
 * the peer's gossip first; kept with that token sealed; made both ways by minting a token back and
 * calling the peer's handshake. No transaction is held open across a call to a peer.
 */
export class MeshLinks {
  constructor(
    private readonly store: Store,
    private readonly bus: EventBus,
    private readonly instance: Instance,
    private readonly site: { url: string },
    private readonly tokens: MeshTokens,
    private readonly peers: PeerClient,
    private readonly settings: MeshSettings,
  ) {}

  /** `expectedInstance`: the id a discovered peer was seen under; the URL must still answer as it. */
  async link(caller: Caller, input: LinkInput, expectedInstance?: string): Promise<MeshLink> {
    const url = normalizePeerUrl(input.url);
    const gossip = await this.peers.gossip(url, input.token).catch((error: unknown) => {
      throw peerError(error, "peer rejected the token");
    });
    if (gossip.instance_id === this.instance.id) throw invalid("url", "that url is this instance", "cannot link this instance to itself");
    if (expectedInstance !== undefined && gossip.instance_id !== expectedInstance) {
      throw invalid("instance_id", "the discovered url now answers as another instance", "the discovered url now answers as another instance");
    }
    const existing = await this.store.mesh.linkByPeer(this.store.reader, gossip.instance_id);
    if (existing) throw alreadyLinked(existing.id);
    const mapping = defaultMapping(input.projects, gossip);
    const direction = input.direction ?? "both";
    const at = now();
    const row = newLinkRow(this.instance, {
      peer: gossip,
      url,
      label: input.label ?? null,
      mapping,
      direction,
      intervalSeconds: input.interval_seconds ?? DEFAULT_INTERVAL_SECONDS,
      maxConfidence: input.max_confidence ?? DEFAULT_MAX_CONFIDENCE,
      token: input.token,
      nextSyncAt: direction === "both" ? addSeconds(at, HANDSHAKE_HOLD_SECONDS) : at,
      antiEntropyHours: this.settings.antiEntropyHours,
      createdBy: caller.agentId,
      at,
    });
    const minted = await this.insert(row, async (tx) => {
      await checkLocalProjects(this.store, tx, mapping);
      if ((await this.store.mesh.countLinks(tx)) >= MAX_LINKS) throw new AppError("CONFLICT", `at most ${MAX_LINKS} links; unlink one first`);
      if (direction === "pull") {
        await this.store.mesh.insertLink(tx, row);
        await this.emitLinked(tx, caller.agentId, row, "request");
        return null;
      }
      const locals = [...new Set(mapping.map((pair) => pair.local))];
      const token = await this.tokens.mint(tx, caller.agentId, { label: `for ${gossip.name}`.slice(0, 100), projects: locals, capabilities: ["pull"] }, row.id);
      row.minted_token_id = token.id;
      await this.store.mesh.insertLink(tx, row);
      return token.token;
    });
    if (minted !== null) await this.handshake(caller, row, input.token, minted, mapping);
    return meshLinkOf((await this.store.mesh.linkById(this.store.reader, row.id)) as MeshLinkRow);
  }

  /** Runs `work`, which inserts `row`, in one transaction; a peer linked meanwhile is a 409 all the same. */
  private async insert<T>(row: NewMeshLinkRow, work: (tx: Tx) => Promise<T>): Promise<T> {
    try {
      return await this.store.transaction(work);
    } catch (error) {
      const winner = error instanceof ConstraintViolation ? await this.store.mesh.linkByPeer(this.store.reader, row.peer_instance_id) : undefined;
      if (winner) throw alreadyLinked(winner.id);
      throw error;
    }
  }

  /**
   * Asks the peer to pull from us with the token just minted. When it does not, the request fails
   * whole: the token is revoked and the link removed, so a retry starts clean (decisions.md).
   */
  private async handshake(caller: Caller, row: NewMeshLinkRow, bearer: string, minted: string, mapping: ProjectMapping[]): Promise<void> {
    try {
      await this.peers.handshake(row.url, bearer, {
        instance_id: this.instance.id,
        name: this.instance.name,
        url: this.site.url.replace(/\/+$/, ""),
        token: minted,
        projects: inverted(mapping),
      });
    } catch (error) {
      await this.store.transaction(async (tx) => {
        await this.tokens.revokeForLink(tx, caller.agentId, row.minted_token_id);
        const held = await this.store.mesh.linkById(tx, row.id);
        if (held) await this.store.mesh.deleteLink(tx, held.pk);
      });
      throw peerError(error, "peer refused the handshake: its token needs the handshake capability, or link with direction pull");
    }
    await this.store.transaction(async (tx) => {
      const held = await this.store.mesh.linkById(tx, row.id);
      if (!held) return;
      await this.store.mesh.patchLink(tx, held.pk, { next_sync_at: now() });
      await this.emitLinked(tx, caller.agentId, row, "request");
    });
  }

  async list(cursor: string | undefined, limit: number): Promise<Page<MeshLink>> {
    const after = decodeCursor(cursor, isPkCursor);
    const rows = await this.store.mesh.listLinks(this.store.reader, after?.pk ?? 0, limit + 1);
    return pageOf(rows, limit, meshLinkOf, (row) => ({ pk: Number(row.pk) }));
  }

  async update(caller: Caller, id: string, changes: LinkChanges): Promise<MeshLink> {
    return this.store.transaction(async (tx) => {
      const row = await this.store.mesh.linkById(tx, id);
      if (!row) throw notFound("mesh link");
      const at = now();
      const patch: MeshLinkPatch = {
        label: changes.label,
        interval_seconds: changes.interval_seconds,
        max_confidence: changes.max_confidence,
        updated_at: at,
      };
      if (changes.projects !== undefined) {
        const mapping = mappingFrom(changes.projects);
        await checkLocalProjects(this.store, tx, mapping);
        patch.projects = JSON.stringify(mapping);
        // Entries of a newly mapped project were passed over by the cursor: a merkle comparison brings them.
        patch.anti_entropy_at = at;
      }
      if (changes.paused !== undefined && (changes.paused ? 1 : 0) !== row.paused) {
        patch.paused = changes.paused ? 1 : 0;
        // Resumed: synced on the next round rather than after whatever the schedule said before the pause.
        if (!changes.paused) patch.next_sync_at = at;
      }
      await this.store.mesh.patchLink(tx, row.pk, patch);
      const updated = (await this.store.mesh.linkById(tx, id)) as MeshLinkRow;
      const [previous, status] = [shownStatus(row), shownStatus(updated)];
      if (previous !== status) {
        await this.bus.emit(tx, {
          type: "mesh.peer.status",
          agentId: caller.agentId,
          project: null,
          audience: await ownersAudience(this.store, tx),
          payload: { link_id: row.id, status, previous },
        });
      }
      return meshLinkOf(updated);
    });
  }

  /** Removes the link and revokes the token minted for it; the copies it brought stay. */
  async unlink(caller: Caller, id: string): Promise<void> {
    await this.store.transaction(async (tx) => {
      const row = await this.store.mesh.linkById(tx, id);
      if (!row || !(await this.store.mesh.deleteLink(tx, row.pk))) throw notFound("mesh link");
      await this.tokens.revokeForLink(tx, caller.agentId, row.minted_token_id);
      await this.bus.emit(tx, {
        type: "mesh.peer.unlinked",
        agentId: caller.agentId,
        project: null,
        audience: await ownersAudience(this.store, tx),
        payload: { link_id: row.id, peer_instance_id: row.peer_instance_id },
      });
    });
  }

  /** `POST /mesh/link-discovered`: a link to a peer heard of, at the URL it was heard at. */
  async linkDiscovered(caller: Caller, instanceId: string, input: Omit<LinkInput, "url">): Promise<MeshLink> {
    const discovered = await this.store.mesh.discoveredById(this.store.reader, instanceId);
    if (!discovered) throw notFound("discovered peer");
    return this.link(caller, { ...input, url: discovered.url }, instanceId);
  }

  private async emitLinked(tx: Tx, actor: string, row: NewMeshLinkRow, via: "request" | "handshake"): Promise<void> {
    await this.bus.emit(tx, {
      type: "mesh.peer.linked",
      agentId: actor,
      project: null,
      audience: await ownersAudience(this.store, tx),
      payload: { link_id: row.id, peer_instance_id: row.peer_instance_id, peer_name: row.peer_name, direction: row.direction, via },
    });
  }
}

/**
 * The projects a new link maps: those asked for, each granted by the peer's token; by default every
 * project the token grants, under the same id here.
 */
function defaultMapping(asked: MappingInput | undefined, gossip: PeerGossip): ProjectMapping[] {
  const granted = gossip.grant?.projects;
  const mapping = asked === undefined ? mappingFrom(granted ?? []) : mappingFrom(asked);
  if (granted !== undefined) {
    for (const [index, pair] of mapping.entries()) {
      if (!granted.includes(pair.remote)) throw invalid(`projects.${index}`, `the peer's token does not grant its project ${pair.remote}`);
    }
  }
  if (mapping.length === 0 && gossip.grant?.include_global !== true) {
    throw invalid("projects", "no project to link: the peer's token grants none (name them with projects)");
  }
  return mapping;
}

/** A failed call to a peer as the request's answer: `rejected` in the words of the step that failed. */
export function peerError(error: unknown, rejected: string): unknown {
  if (!(error instanceof PeerCallError)) return error;
  if (error.failure === "rejected") return invalid("token", rejected, rejected);
  return error.toAppError();
}
