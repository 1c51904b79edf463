import { createHash, randomBytes, timingSafeEqual } from "node:crypto";
import { conflict, forbidden, invalid, invalidCredentials, notFound } from "../../core/errors.js";
import { newId } from "../../core/ids.js";
import { now } from "../../core/time.js";
import type { EventBus } from "../../events/bus.js";
import type { MeshTokenRow } from "../../store/mesh.js";
import type { Store, Tx } from "../../store/store.js";
import type { MeshCapability, MeshToken } from "../../wire/mesh.js";
import type { Caller, MeshGrant } from "../caller.js";
import { decodeCursor, encodeCursor, type Page } from "../paging.js";
import { ownersAudience } from "./audience.js";

/** Every mesh token starts so: told apart from API keys and OAuth tokens at a glance (and by the gateway). */
const MESH_TOKEN_PREFIX = "cairn_mt_";
/** Characters of a token shown in lists: the prefix and a few of the secret, never enough to use. */
const SHOWN = MESH_TOKEN_PREFIX.length + 4;
/** Live (unrevoked) tokens an instance keeps at most. */
const MAX_LIVE_TOKENS = 200;
/** A token's last use is written at most this often. */
const TOUCH_INTERVAL_MS = 60_000;

const hashMeshToken = (token: string): string => createHash("sha256").update(token, "utf8").digest("hex");
export const isMeshToken = (token: string): boolean => token.startsWith(MESH_TOKEN_PREFIX);
/** What a link shows of the token it holds: recognisable, unusable. */
export const tokenHint = (token: string): string => `${token.slice(0, SHOWN)}…${token.slice(-4)}`;

export interface NewTokenInput {
  label: string;
  projects: string[];
  include_global?: boolean | undefined;
  capabilities: MeshCapability[];
  expires_at?: string | null | undefined;
}

export interface TokenPatchInput {
  label?: string | undefined;
  projects?: string[] | undefined;
  include_global?: boolean | undefined;
  capabilities?: MeshCapability[] | undefined;
  expires_at?: string | null | undefined;
}

const parseList = <T extends string>(json: string): T[] => JSON.parse(json) as T[];

function meshTokenOf(row: MeshTokenRow): MeshToken {
  return {
    id: row.id,
    label: row.label,
    prefix: row.prefix,
    projects: parseList(row.projects),
    include_global: row.include_global === 1,
    capabilities: parseList<MeshCapability>(row.capabilities),
    expires_at: row.expires_at,
    revoked_at: row.revoked_at,
    link_id: row.link_id,
    created_by: row.created_by,
    created_at: row.created_at,
    updated_at: row.updated_at,
    last_used_at: row.last_used_at,
  };
}

/** "pull" always, then the others in one order, once each. */
const capabilitiesOf = (asked: readonly MeshCapability[]): MeshCapability[] => {
  const order: MeshCapability[] = ["pull", "handshake", "feed", "gossip"];
  return order.filter((capability) => capability === "pull" || asked.includes(capability));
};

const live = (row: MeshTokenRow, at: string): boolean => row.revoked_at === null && (row.expires_at === null || row.expires_at > at);

// Compared against when no token has the presented hash, so an unknown token costs what a revoked one does.
const ABSENT = createHash("sha256").update(randomBytes(32)).digest("hex");

/**
 * Tokens this instance grants to peers (CONTRACT §16): the owner mints them scoped to projects and
 * capabilities, a peer presents one on the feed, merkle, gossip and handshake routes. The secret is
 * shown once and kept only as its SHA-256; revoking takes effect on the next request.
 */
export class MeshTokens {
  constructor(
    private readonly store: Store,
    private readonly bus: EventBus,
  ) {}

  /** The grant a presented token carries, or 401 (unknown, revoked and expired tokens alike). */
  async authenticate(token: string): Promise<Caller> {
    const hash = hashMeshToken(token);
    const row = await this.store.mesh.tokenByHash(this.store.reader, hash);
    const at = now();
    const matches = timingSafeEqual(Buffer.from(hash), Buffer.from(row?.token_hash ?? ABSENT));
    if (!row || !matches || !live(row, at)) throw invalidCredentials();
    if (row.last_used_at === null || Date.parse(at) - Date.parse(row.last_used_at) >= TOUCH_INTERVAL_MS) {
      const notBefore = new Date(Date.parse(at) - TOUCH_INTERVAL_MS).toISOString();
      await this.store.transaction((tx) => this.store.mesh.touchToken(tx, row.pk, at, notBefore));
    }
    const grant: MeshGrant = {
      tokenId: row.id,
      projects: parseList(row.projects),
      includeGlobal: row.include_global === 1,
      capabilities: parseList<MeshCapability>(row.capabilities),
    };
    return { agentId: `mesh:${row.id}`, role: "viewer", mesh: grant };
  }

  async create(caller: Caller, input: NewTokenInput): Promise<MeshToken & { token: string }> {
    return this.store.transaction((tx) => this.mint(tx, caller.agentId, input, null));
  }

  /**
   * Mints a token in the caller's transaction (a link made both ways mints one for its peer). The
   * projects must exist: a token for a project that is not there would grant nothing, silently.
   */
  async mint(tx: Tx, actor: string, input: NewTokenInput, linkId: string | null): Promise<MeshToken & { token: string }> {
    await this.checkScope(tx, input.projects, input.include_global ?? false);
    if (typeof input.expires_at === "string" && input.expires_at <= now()) throw invalid("expires_at", "must be in the future");
    if ((await this.store.mesh.countLiveTokens(tx)) >= MAX_LIVE_TOKENS) {
      throw conflict(`at most ${MAX_LIVE_TOKENS} live mesh tokens; revoke one first`);
    }
    const token = `${MESH_TOKEN_PREFIX}${randomBytes(32).toString("base64url")}`;
    const at = now();
    const row = {
      id: newId(),
      label: input.label,
      token_hash: hashMeshToken(token),
      prefix: token.slice(0, SHOWN),
      projects: JSON.stringify([...new Set(input.projects)]),
      include_global: input.include_global === true ? 1 : 0,
      capabilities: JSON.stringify(capabilitiesOf(input.capabilities)),
      expires_at: input.expires_at ?? null,
      link_id: linkId,
      created_by: actor,
      created_at: at,
      updated_at: at,
    };
    const pk = await this.store.mesh.insertToken(tx, row);
    await this.bus.emit(tx, { type: "mesh.token.created", agentId: actor, project: null, audience: await ownersAudience(this.store, tx), payload: { token_id: row.id } });
    return { ...meshTokenOf({ ...row, pk, revoked_at: null, last_used_at: null }), token };
  }

  async list(cursor: string | undefined, limit: number): Promise<Page<MeshToken>> {
    const after = decodeCursor(cursor, (value): value is { pk: number } => typeof (value as { pk?: unknown })?.pk === "number");
    const rows = await this.store.mesh.listTokens(this.store.reader, after?.pk ?? 0, limit + 1);
    const more = rows.length > limit;
    const kept = more ? rows.slice(0, limit) : rows;
    return { items: kept.map(meshTokenOf), nextCursor: more ? encodeCursor({ pk: kept.at(-1)?.pk }) : null };
  }

  async update(caller: Caller, id: string, input: TokenPatchInput): Promise<MeshToken> {
    return this.store.transaction(async (tx) => {
      const row = await this.store.mesh.tokenById(tx, id);
      if (!row) throw notFound("mesh token");
      if (row.revoked_at !== null) throw conflict("the token is revoked");
      const projects = input.projects ?? parseList<string>(row.projects);
      const includeGlobal = input.include_global ?? row.include_global === 1;
      await this.checkScope(tx, projects, includeGlobal);
      if (typeof input.expires_at === "string" && input.expires_at <= now()) throw invalid("expires_at", "must be in the future");
      const at = now();
      const patch = {
        label: input.label,
        projects: input.projects === undefined ? undefined : JSON.stringify([...new Set(input.projects)]),
        include_global: input.include_global === undefined ? undefined : input.include_global ? 1 : 0,
        capabilities: input.capabilities === undefined ? undefined : JSON.stringify(capabilitiesOf(input.capabilities)),
        expires_at: input.expires_at,
        updated_at: at,
      };
      await this.store.mesh.patchToken(tx, row.pk, patch);
      await this.bus.emit(tx, { type: "mesh.token.updated", agentId: caller.agentId, project: null, audience: await ownersAudience(this.store, tx), payload: { token_id: row.id } });
      const updated = await this.store.mesh.tokenById(tx, id);
      return meshTokenOf(updated as MeshTokenRow);
    });
  }

  /** Revokes at once: the next request with it is refused. */
  async revoke(caller: Caller, id: string): Promise<void> {
    await this.store.transaction(async (tx) => {
      const row = await this.store.mesh.tokenById(tx, id);
      if (!row) throw notFound("mesh token");
      await this.revokeRow(tx, caller.agentId, row);
    });
  }

  /** Revokes the token minted for a link, if there is one still live. */
  async revokeForLink(tx: Tx, actor: string, tokenId: string | null): Promise<void> {
    if (tokenId === null) return;
    const row = await this.store.mesh.tokenById(tx, tokenId);
    if (row) await this.revokeRow(tx, actor, row);
  }

  private async revokeRow(tx: Tx, actor: string, row: MeshTokenRow): Promise<void> {
    if (await this.store.mesh.revokeToken(tx, row.pk, now())) {
      await this.bus.emit(tx, { type: "mesh.token.revoked", agentId: actor, project: null, audience: await ownersAudience(this.store, tx), payload: { token_id: row.id } });
    }
  }

  /** An empty scope grants nothing (422); every project named must exist (422 naming it). */
  private async checkScope(tx: Tx, projects: readonly string[], includeGlobal: boolean): Promise<void> {
    if (projects.length === 0 && !includeGlobal) throw invalid("projects", "a token must grant at least one project or the global entries");
    for (const [index, project] of projects.entries()) {
      if (!(await this.store.projects.byId(tx, project))) throw invalid(`projects.${index}`, "no such project");
    }
  }
}

/** The refusal a peer's token meets on every route that does not take mesh tokens. */
export const meshTokenRefused = () => forbidden("a mesh token is accepted only on the feed, merkle, gossip and handshake routes");
