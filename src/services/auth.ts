import { timingSafeEqual } from "node:crypto";
import type { Config } from "../core/config.js";
import { AGENT_ID_PATTERN } from "../wire/ids.js";
import { invalidCredentials } from "../core/errors.js";
import { addSeconds, now } from "../core/time.js";
import type { AgentRow } from "../store/agents.js";
import type { Store } from "../store/store.js";
import type { Caller } from "./caller.js";
import { hashKey, keyMatches } from "./credentials.js";
import type { FailureThrottle } from "./throttle.js";
import { canWrite, resourceOf, scopesOf } from "./oauth/scopes.js";

// Liveness is written at most this often per agent, so reads do not turn into writes.
const TOUCH_INTERVAL_MS = 30_000;

/**
 * Who an agent's credentials say it is: an agent id with its key, or a bearer token bought with
 * them. Every success is also a sign of life (`last_seen_at`, and the leases of its task claims).
 */
export class AuthService {
  constructor(
    private readonly store: Store,
    private readonly config: Config,
    private readonly throttle: FailureThrottle,
    /** Where clients reach this server: a bearer token is accepted only for its resource. */
    private readonly site: { url: string },
  ) {}

  /** Checks `X-Agent-ID`/`X-API-Key`; a wrong id and a wrong key fail the same way, in the same time. */
  async authenticateKey(agentId: string, apiKey: string, address: string | undefined): Promise<Caller> {
    const row = await this.verifyKey(agentId, apiKey, address);
    await this.touch(row);
    return { agentId: row.agent_id, role: row.role };
  }

  /**
   * The live agent whose key this is, or 401. Failures are throttled per address and agent id, and
   * an unknown id costs what a wrong key costs: the lookup reads a real row either way (another
   * agent's stands in for a missing one) and the key is compared in constant time.
   */
  async verifyKey(agentId: string, apiKey: string, address: string | undefined): Promise<AgentRow & { key_hash: Buffer }> {
    // An id no agent can have is refused before the throttle remembers it.
    if (!AGENT_ID_PATTERN.test(agentId)) throw invalidCredentials();
    return this.throttle.guard(address, agentId, async () => {
      const row = await this.store.agents.forKeyCheck(this.store.reader, agentId);
      const matches = keyMatches(apiKey, row?.key_hash);
      if (!matches || row?.found !== 1 || row.deleted_at !== null || row.key_hash === null) throw invalidCredentials();
      const { found: _found, ...agent } = row;
      return agent as AgentRow & { key_hash: Buffer };
    });
  }

  /**
   * A bearer token's agent, if the token is unexpired and issued for this server's resource, and
   * either bought with the agent's current key (client credentials) or issued from a grant whose
   * agent still has the role it had at consent. A token whose scope is `cairn:read` alone acts
   * with a viewer's rights.
   */
  async authenticateToken(token: string): Promise<Caller> {
    const stored = await this.store.oauth.byHash(this.store.reader, hashKey(token));
    const row = stored ? await this.store.agents.get(this.store.reader, stored.agent_id) : undefined;
    const bound =
      stored?.grant_id === null
        ? row !== undefined && row.key_hash !== null && stored.key_hash !== null && timingSafeEqual(row.key_hash, stored.key_hash)
        : stored !== undefined && stored.grant_role !== null && stored.grant_role === row?.role && (row.role === "agent" || row.role === "viewer");
    const valid =
      stored !== undefined &&
      stored.expires_at > now() &&
      (stored.resource === null || stored.resource === resourceOf(this.site.url)) &&
      row !== undefined &&
      row.deleted_at === null &&
      bound;
    if (!valid) throw invalidCredentials();
    await this.touch(row);
    if (canWrite(scopesOf(stored.scope))) return { agentId: row.agent_id, role: row.role };
    return { agentId: row.agent_id, role: "viewer", readOnlyScope: true };
  }

  /**
   * Records liveness: any authenticated request also keeps the agent's task claims alive. Written
   * at most every TOUCH_INTERVAL_MS (or a quarter of the lease, if shorter).
   */
  private async touch(row: AgentRow): Promise<void> {
    const at = now();
    const lease = this.config.TASK_LEASE_SECONDS;
    const interval = lease > 0 ? Math.min(TOUCH_INTERVAL_MS, (lease * 1000) / 4) : TOUCH_INTERVAL_MS;
    if (row.last_seen_at !== null && Date.parse(at) - Date.parse(row.last_seen_at) < interval) return;
    await this.store.transaction(async (tx) => {
      await this.store.agents.touch(tx, row.agent_id, at);
      if (lease > 0) await this.store.tasks.extendLeases(tx, row.agent_id, addSeconds(at, lease));
    });
  }
}
