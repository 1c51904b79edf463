import type { Config } from "../core/config.js";
import { newApiKey } from "../core/ids.js";
import type { Logger } from "../core/log.js";
import { now } from "../core/time.js";
import type { Store, Tx } from "../store/store.js";
import type { OAuthGrants } from "./oauth/grants.js";
import { hashKey, readCredentials, writeCredentials, type BootstrapCredential } from "./credentials.js";
import type { Role } from "../wire/roles.js";
import { locks } from "./locks.js";

/**
 * The role of the identities every start makes sure of: the web UI's agent is the owner, the
 * archivist's the archivist. Undefined for any other agent id.
 */
export function bootstrapRole(config: Pick<Config, "UI_AGENT_ID" | "ARCHIVIST_AGENT_ID">, agentId: string): Role | undefined {
  if (agentId === config.UI_AGENT_ID) return "owner";
  if (agentId === config.ARCHIVIST_AGENT_ID) return "archivist";
  return undefined;
}

/**
 * The identities configuration defines rather than registration: the agents of `AGENT_KEYS`, and
 * the UI (owner) and archivist identities, whose keys live in `credentials.json` in DATA_DIR so
 * the human and the archivist process can find them.
 */
export class BootstrapIdentities {
  constructor(
    private readonly store: Store,
    private readonly config: Config,
    private readonly log: Logger,
    private readonly grants: OAuthGrants,
  ) {}

  /** An agent whose role configuration changed loses every token it held (CONTRACT §19). */
  private async roleChanged(tx: Tx, agentId: string): Promise<void> {
    await this.store.oauth.deleteForAgent(tx, agentId);
    await this.grants.revokeForAgent(tx, agentId, agentId, "role_changed");
  }

  /**
   * Applies `AGENT_KEYS` and makes sure the UI (owner) and archivist identities exist, generating
   * keys into `credentials.json` only when it has to. Returns the file's path when it wrote it.
   */
  async apply(): Promise<string | null> {
    const at = now();
    const staticIds = new Set(this.config.AGENT_KEYS.map((agent) => agent.agentId));
    const stored = readCredentials(this.config.DATA_DIR)?.agents ?? {};
    let generated: Record<string, BootstrapCredential> = {};

    await this.store.transaction(async (tx) => {
      // Run again after a collision (another server bootstrapping the same database), this attempt
      // decides afresh what it generates: a key the other server's row superseded is never written.
      generated = {};
      // Servers starting together on one database take turns: each then sees what the other wrote.
      await tx.lock(locks.bootstrap());
      const agents = this.store.agents;
      for (const agent of this.config.AGENT_KEYS) {
        const role = bootstrapRole(this.config, agent.agentId) ?? agent.role;
        const row = await agents.get(tx, agent.agentId);
        if (row) {
          if (row.role !== role) await this.roleChanged(tx, agent.agentId);
          await agents.restoreKey(tx, agent.agentId, hashKey(agent.key), "static", role);
        } else {
          await agents.insert(tx, {
            agent_id: agent.agentId,
            display_name: null,
            role,
            key_hash: hashKey(agent.key),
            key_source: "static",
            created_at: at,
          });
        }
      }
      // Identities dropped from AGENT_KEYS lose their key (their records stay).
      for (const row of await agents.staticWithKeys(tx)) {
        if (!staticIds.has(row.agent_id)) await agents.setKey(tx, row.agent_id, null);
      }
      for (const [id, role] of [
        [this.config.UI_AGENT_ID, "owner"],
        [this.config.ARCHIVIST_AGENT_ID, "archivist"],
      ] as const) {
        if (staticIds.has(id)) continue;
        const row = await agents.get(tx, id);
        const fromFile = stored[id]?.api_key;
        if (row && row.deleted_at === null && row.key_hash !== null && row.key_source !== "static") {
          if (row.role !== role) {
            await this.roleChanged(tx, id);
            await agents.setRole(tx, id, role);
          }
          continue;
        }
        const apiKey = fromFile ?? newApiKey();
        if (fromFile === undefined) generated[id] = { agent_id: id, role, api_key: apiKey };
        if (row) {
          if (row.role !== role) await this.roleChanged(tx, id);
          await agents.restoreKey(tx, id, hashKey(apiKey), "bootstrap", role);
        } else {
          await agents.insert(tx, { agent_id: id, display_name: null, role, key_hash: hashKey(apiKey), key_source: "bootstrap", created_at: at });
        }
      }
    });

    // A key in the file for an identity AGENT_KEYS now defines would no longer work: drop it.
    const superseded = Object.keys(stored).filter((id) => staticIds.has(id));
    for (const id of superseded) delete stored[id];
    if (Object.keys(generated).length === 0 && superseded.length === 0) return null;
    const path = writeCredentials(this.config.DATA_DIR, this.config.PUBLIC_URL, { ...stored, ...generated });
    if (Object.keys(generated).length > 0) this.log.info("generated bootstrap credentials", { path, agents: Object.keys(generated) });
    return path;
  }

  /** The key an identity starts with (the archivist's, for the child process `serve` spawns): from AGENT_KEYS, else the credentials file. */
  keyFor(agentId: string): string | undefined {
    return (
      this.config.AGENT_KEYS.find((agent) => agent.agentId === agentId)?.key ??
      readCredentials(this.config.DATA_DIR)?.agents[agentId]?.api_key
    );
  }

  /**
   * Records a new key of the UI or archivist identity in the credentials file, which is how the
   * human and the archivist find their keys; any other agent's key is never written to disk.
   */
  keyChanged(agentId: string, apiKey: string): void {
    const role = bootstrapRole(this.config, agentId);
    if (role === undefined) return;
    const agents = readCredentials(this.config.DATA_DIR)?.agents ?? {};
    agents[agentId] = { agent_id: agentId, role, api_key: apiKey };
    writeCredentials(this.config.DATA_DIR, this.config.PUBLIC_URL, agents);
  }
}
