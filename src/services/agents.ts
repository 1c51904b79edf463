import type { Config } from "../core/config.js";
import { AppError, conflict, forbidden, invalid, notFound } from "../core/errors.js";
import { newApiKey } from "../core/ids.js";
import { now } from "../core/time.js";
import type { AgentRow } from "../store/agents.js";
import type { Reader, Store, Tx } from "../store/store.js";
import type { Viewpoint } from "../store/visibility.js";
import type { EventBus } from "../events/bus.js";
import { bootstrapRole, type BootstrapIdentities } from "./bootstrap.js";
import { viewpointOf, type Caller } from "./caller.js";
import { hashKey, keyMatches } from "./credentials.js";
import { pageOf, decodeCursor, type Page } from "./paging.js";
import type { Presence } from "./presence.js";
import type { OAuthGrants } from "./oauth/grants.js";
import { REGISTRATION_IDENTITY, type FailureThrottle } from "./throttle.js";
import type { AgentRecord, AgentSelf, KeyRotation, Registration } from "../wire/agents.js";
import type { Role } from "../wire/roles.js";

const isAgentId = (value: unknown): value is string => typeof value === "string";

// `/agents/me` routes would shadow an agent of this id.
const RESERVED_IDS = new Set(["me"]);

/** An id no agent may have: it names something else in a route (`/agents/me`). */
export const isReservedAgentId = (agentId: string): boolean => RESERVED_IDS.has(agentId);

function checkNotReserved(agentId: string): void {
  if (RESERVED_IDS.has(agentId)) {
    throw invalid("agent_id", "this id is reserved");
  }
}

/**
 * The agents as records: registering and creating them, listing them, and what they or an owner
 * may change (name, display name, key, deletion). Authentication is AuthService's, who is online
 * Presence's, and the identities configuration defines BootstrapIdentities'.
 */
export class AgentService {
  constructor(
    private readonly store: Store,
    private readonly bus: EventBus,
    private readonly config: Config,
    private readonly throttle: FailureThrottle,
    private readonly presence: Presence,
    private readonly identities: BootstrapIdentities,
    private readonly grants: OAuthGrants,
  ) {}

  /**
   * The agents as `viewpoint` may see them: each one's current project only if the viewpoint sees
   * that project, and only the claimed tasks the viewpoint can see (CONTRACT §2.2a). A page of
   * agents costs one query for the claims and at most one for the viewpoint's memberships.
   */
  private async toRecords(r: Reader, rows: AgentRow[], viewpoint: Viewpoint): Promise<AgentRecord[]> {
    const claimed = await this.store.tasks.claimedIdsByAgent(r, rows.map((row) => row.agent_id), viewpoint);
    const needsMembership = (row: AgentRow): boolean => row.current_project !== null && !viewpoint.allProjects && viewpoint.agentId !== row.agent_id;
    const memberOf = rows.some(needsMembership) ? new Set(await this.store.projects.projectsOf(r, viewpoint.agentId)) : new Set<string>();
    return rows.map((row) => {
      const project = row.current_project;
      return {
        agent_id: row.agent_id,
        display_name: row.display_name,
        role: row.role,
        created_at: row.created_at,
        last_seen_at: row.last_seen_at,
        online: this.presence.isOnline(row),
        current_project: project === null || !needsMembership(row) || memberOf.has(project) ? project : null,
        claimed_tasks: claimed.get(row.agent_id) ?? [],
      };
    });
  }

  private async toRecord(r: Reader, row: AgentRow, viewpoint: Viewpoint): Promise<AgentRecord> {
    return (await this.toRecords(r, [row], viewpoint))[0] as AgentRecord;
  }

  /** Fixed identities: renaming or deleting them would break the UI, the archivist or configuration. */
  private isPinned(row: AgentRow): boolean {
    return row.key_source === "static" || bootstrapRole(this.config, row.agent_id) !== undefined;
  }

  private async liveRow(r: Reader, agentId: string): Promise<AgentRow> {
    return this.live(await this.store.agents.get(r, agentId));
  }

  /** The agent, locked for a change to it: a rename, delete or new key racing this one goes first or waits. */
  private async lockedRow(tx: Tx, agentId: string): Promise<AgentRow> {
    return this.live(await this.store.agents.lock(tx, agentId));
  }

  private live(row: AgentRow | undefined): AgentRow {
    if (!row || row.deleted_at !== null) throw notFound("agent");
    return row;
  }

  async register(input: { agent_id: string; display_name?: string | undefined }, presentedKey: string | undefined, address: string | undefined): Promise<Registration> {
    if (!this.config.REGISTRATION_KEY) throw forbidden("registration is disabled (no REGISTRATION_KEY configured)");
    await this.checkRegistrationKey(presentedKey, address);
    return this.create(input.agent_id, input.display_name ?? null, "agent");
  }

  async selfRegister(input: { agent_id: string; display_name?: string | undefined }, presentedKey: string | undefined, address: string | undefined): Promise<Registration> {
    if (this.config.REGISTRATION_KEY) await this.checkRegistrationKey(presentedKey, address);
    else if (!this.config.hostIsLoopback) {
      throw forbidden("self-registration without a registration key is only open on a loopback HOST");
    }
    return this.create(input.agent_id, input.display_name ?? null, "agent");
  }

  private checkRegistrationKey(presented: string | undefined, address: string | undefined): Promise<void> {
    return this.throttle.guard(address, REGISTRATION_IDENTITY, () => {
      if (presented === undefined || !keyMatches(presented, hashKey(this.config.REGISTRATION_KEY))) {
        throw new AppError("UNAUTHENTICATED", "invalid registration key");
      }
    });
  }

  /** Creates an agent with a fresh key; the key is returned once and only its hash is kept. */
  async create(agentId: string, displayName: string | null, role: Role): Promise<Registration> {
    checkNotReserved(agentId);
    const apiKey = newApiKey();
    const createdAt = now();
    await this.store.transaction(async (tx) => {
      // The UI and archivist ids belong to the bootstrap identities even before the first start
      // creates them (the CLI can add agents to a data directory no server has opened yet).
      const reserved = bootstrapRole(this.config, agentId) !== undefined;
      if (reserved || (await this.store.agents.get(tx, agentId))) throw conflict("agent id taken");
      await this.store.agents.insert(tx, {
        agent_id: agentId,
        display_name: displayName,
        role,
        key_hash: hashKey(apiKey),
        key_source: "generated",
        created_at: createdAt,
      });
      await this.bus.emit(tx, { type: "agent.registered", agentId, project: null, payload: { agent_id: agentId, role } });
    });
    return { agent_id: agentId, api_key: apiKey, role, created_at: createdAt };
  }

  async list(caller: Caller, cursor: string | undefined, limit: number): Promise<Page<AgentRecord>> {
    const after = decodeCursor(cursor, isAgentId);
    const reader = this.store.reader;
    const rows = await this.store.agents.list(reader, after, limit + 1);
    const viewpoint = viewpointOf(caller);
    const page = pageOf(rows, limit, (row) => row, (row) => row.agent_id);
    return { ...page, items: await this.toRecords(reader, page.items, viewpoint) };
  }

  async me(caller: Caller): Promise<AgentSelf> {
    const reader = this.store.reader;
    const row = await this.liveRow(reader, caller.agentId);
    return {
      ...(await this.toRecord(reader, row, viewpointOf(caller))),
      projects: (await this.store.projects.projectsOf(reader, caller.agentId)).sort(),
      can_write_directives: this.config.DIRECTIVE_WRITERS.includes(caller.agentId),
    };
  }

  /** Renames and/or sets the display name; a rename rewrites every record naming the old id. */
  update(caller: Caller, targetId: string, change: { agent_id?: string | undefined; display_name?: string | null | undefined }): Promise<AgentRecord> {
    return this.store.transaction(async (tx) => {
      const row = await this.lockedRow(tx, targetId);
      let id = row.agent_id;
      if (change.agent_id !== undefined && change.agent_id !== id) {
        if (this.isPinned(row)) {
          throw invalid("agent_id", "the UI, archivist and AGENT_KEYS identities keep their ids", "this agent cannot be renamed");
        }
        checkNotReserved(change.agent_id);
        if (await this.store.agents.get(tx, change.agent_id)) throw conflict("agent id taken");
        await this.store.agents.rename(tx, id, change.agent_id);
        await this.bus.emit(tx, {
          type: "agent.renamed",
          agentId: caller.agentId === id ? change.agent_id : caller.agentId,
          project: null,
          payload: { from: id, to: change.agent_id },
        });
        id = change.agent_id;
      }
      if (change.display_name !== undefined && change.display_name !== row.display_name) {
        await this.store.agents.setDisplayName(tx, id, change.display_name);
        await this.bus.emit(tx, {
          type: "agent.updated",
          agentId: caller.agentId === row.agent_id ? id : caller.agentId,
          project: null,
          payload: { agent_id: id, fields: ["display_name"] },
        });
      }
      return this.toRecord(tx, await this.liveRow(tx, id), viewpointOf(caller));
    });
  }

  /** Deletes the agent; what it wrote stays, attributed to its id, and the id is never reissued. */
  async remove(caller: Caller, targetId: string): Promise<void> {
    await this.store.transaction(async (tx) => {
      const row = await this.lockedRow(tx, targetId);
      if (this.isPinned(row)) {
        throw invalid("agent_id", "the UI, archivist and AGENT_KEYS identities are managed by configuration", "this agent cannot be deleted");
      }
      await this.store.agents.markDeleted(tx, row.agent_id, now());
      await this.store.oauth.deleteForAgent(tx, row.agent_id);
      await this.grants.revokeForAgent(tx, caller.agentId, row.agent_id, "agent_deleted");
      await this.bus.emit(tx, { type: "agent.deleted", agentId: caller.agentId, project: null, payload: { agent_id: row.agent_id } });
    });
  }

  /** Issues a new key (self or owner); the old one stops working at once. */
  async rotateKey(caller: Caller, targetId: string): Promise<KeyRotation> {
    if (caller.agentId !== targetId && caller.role !== "owner") {
      // Not an oracle: any agent may list agents, so existence is not a secret here.
      throw forbidden("only the agent itself or an owner may rotate its key");
    }
    return { api_key: await this.issueKey(targetId, caller.agentId) };
  }

  /** A new key for the agent, issued by `actorId` (`cairn agent rotate-key` acts as the agent itself). */
  async issueKey(targetId: string, actorId: string): Promise<string> {
    const apiKey = newApiKey();
    await this.store.transaction(async (tx) => {
      const row = await this.lockedRow(tx, targetId);
      if (row.key_source === "static") {
        throw invalid("agent_id", "change AGENT_KEYS and restart instead", "this agent's key is set in AGENT_KEYS");
      }
      await this.store.agents.setKey(tx, targetId, hashKey(apiKey));
      // Tokens issued against the old key go with it; a grant's tokens carry no key and stay.
      await this.store.oauth.deleteForAgent(tx, targetId);
      await this.bus.emit(tx, { type: "agent.key_rotated", agentId: actorId, project: null, payload: { agent_id: targetId } });
    });
    // The credentials file is how the human and the archivist find their keys: keep it current.
    this.identities.keyChanged(targetId, apiKey);
    return apiKey;
  }
}
