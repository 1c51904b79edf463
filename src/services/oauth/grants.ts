import { notFound } from "../../core/errors.js";
import { now } from "../../core/time.js";
import type { EventBus } from "../../events/bus.js";
import type { GrantRow } from "../../store/oauth.js";
import type { Store, Tx } from "../../store/store.js";
import type { OAuthGrantRevocation } from "../../wire/events.js";
import type { OAuthGrant } from "../../wire/oauth.js";
import type { Caller } from "../caller.js";
import { ownersAudience } from "../mesh/audience.js";
import { decodeCursor, pageOf, type Page } from "../paging.js";
import { CODE_SECONDS } from "./tokens.js";
import { scopesOf } from "./scopes.js";

/** Grants kept at most in all; a consent beyond it is refused until some are revoked. */
export const MAX_GRANTS = 10_000;
/** Grants one client keeps for one agent; a new consent revokes the oldest beyond it. */
export const MAX_GRANTS_PER_CLIENT_AGENT = 10;

const grantOf = (row: GrantRow): OAuthGrant => ({
  id: row.id,
  client_id: row.client_id,
  client_name: row.client_name,
  client_host: row.client_host,
  agent_id: row.agent_id,
  scopes: scopesOf(row.scope),
  resource: row.resource,
  created_by: row.created_by,
  created_at: row.created_at,
  last_used_at: row.last_used_at,
});

const isGrantKeyset = (value: unknown): value is { at: string; id: string } =>
  typeof value === "object" && value !== null && typeof (value as { at?: unknown }).at === "string" && typeof (value as { id?: unknown }).id === "string";

/**
 * The grants humans made on the consent page (CONTRACT §19): listed and revoked by the owner,
 * revoked by the flow itself when a code or refresh token is reused, and by their agent's deletion
 * or change of role. Revoking a grant takes its code, refresh tokens and access tokens with it;
 * each revocation is an `oauth.grant.revoked` event for the owners.
 */
export class OAuthGrants {
  constructor(
    private readonly store: Store,
    private readonly bus: EventBus,
  ) {}

  async list(cursor: string | undefined, limit: number): Promise<Page<OAuthGrant>> {
    const after = decodeCursor(cursor, isGrantKeyset);
    const rows = await this.store.oauth.listGrants(this.store.reader, after, limit + 1);
    return pageOf(rows, limit, grantOf, (row) => ({ at: row.created_at, id: row.id }));
  }

  async revokeById(caller: Caller, id: string): Promise<void> {
    await this.store.transaction(async (tx) => {
      const row = await this.store.oauth.grant(tx, id);
      if (!row) throw notFound("grant");
      await this.revoke(tx, caller.agentId, row, "owner");
    });
  }

  /** Revokes in the caller's transaction; an event only when the grant was still there. */
  async revoke(tx: Tx, actor: string, row: GrantRow, reason: OAuthGrantRevocation): Promise<void> {
    if (!(await this.store.oauth.deleteGrant(tx, row.id))) return;
    await this.bus.emit(tx, {
      type: "oauth.grant.revoked",
      agentId: actor,
      project: null,
      audience: await ownersAudience(this.store, tx),
      payload: { grant_id: row.id, client_id: row.client_id, agent_id: row.agent_id, reason },
    });
  }

  /** Every grant of the agent, in the caller's transaction (the agent is deleted or its role changed). */
  async revokeForAgent(tx: Tx, actor: string, agentId: string, reason: OAuthGrantRevocation): Promise<void> {
    for (const row of await this.store.oauth.grantsOfAgent(tx, agentId)) await this.revoke(tx, actor, row, reason);
  }

  /** Grants nothing can use any more (code expired unredeemed, refresh tokens expired), a batch at a time. */
  async pruneDead(actor: string, nowMs = Date.now()): Promise<number> {
    const at = new Date(nowMs).toISOString();
    const dead = await this.store.oauth.deadGrants(this.store.reader, at, new Date(nowMs - CODE_SECONDS * 1000).toISOString(), 500);
    if (dead.length === 0) return 0;
    await this.store.transaction(async (tx) => {
      for (const row of dead) await this.revoke(tx, actor, row, "expired");
    });
    return dead.length;
  }

  /** Expired codes, refresh tokens and access tokens; then dead grants. */
  async prune(actor: string): Promise<number> {
    const at = now();
    const removed = await this.store.transaction(
      async (tx) => (await this.store.oauth.deleteExpiredCodes(tx, at)) + (await this.store.oauth.deleteExpiredRefresh(tx, at)) + (await this.store.oauth.deleteExpired(tx, at)),
    );
    return removed + (await this.pruneDead(actor));
  }
}
