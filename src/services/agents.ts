import { timingSafeEqual } from "node:crypto";
import { AGENT_ID_PATTERN, type Config } from "../core/config.js";
import { AppError, conflict, forbidden, invalid, invalidCredentials, notFound } from "../core/errors.js";
import { newApiKey } from "../core/ids.js";
import type { Logger } from "../core/log.js";
import { addSeconds, now } from "../core/time.js";
import type { AgentRow } from "../store/agents.js";
import type { Reader, Store } from "../store/store.js";
import type { Viewpoint } from "../store/visibility.js";
import type { EventBus } from "../events/bus.js";
import { viewpointOf, type Caller } from "./caller.js";
import { hashKey, keyMatches, readCredentials, writeCredentials, type BootstrapCredential } from "./credentials.js";
import { pageOf, decodeCursor, type Page } from "./paging.js";
import { REGISTRATION_IDENTITY, type FailureThrottle } from "./throttle.js";
import type { AgentRecord, AgentSelf, KeyRotation, Registration } from "../wire/agents.js";
import type { Role } from "../wire/roles.js";

const ONLINE_WINDOW_MS = 5 * 60_000;
// Liveness is written at most this often per agent, so reads do not turn into writes.
const TOUCH_INTERVAL_MS = 30_000;

const isAgentId = (value: unknown): value is string => typeof value === "string";

// `/agents/me` routes would shadow an agent of this id.
const RESERVED_IDS = new Set(["me"]);

function checkNotReserved(agentId: string): void {
  if (RESERVED_IDS.has(agentId)) {
    throw invalid("agent_id", "this id is reserved");
  }
}

export class AgentService {
  /** Agents holding an open event stream count as online (the stream registers them here). */
  readonly connected = new Map<string, number>();

  constructor(
    private readonly store: Store,
    private readonly bus: EventBus,
    private readonly config: Config,
    private readonly log: Logger,
    private readonly throttle: FailureThrottle,
  ) {}

  /** Counts an open connection (an event stream) as presence until the returned release is called. */
  connect(agentId: string): () => void {
    this.connected.set(agentId, (this.connected.get(agentId) ?? 0) + 1);
    let released = false;
    return () => {
      if (released) return;
      released = true;
      const left = (this.connected.get(agentId) ?? 1) - 1;
      if (left > 0) this.connected.set(agentId, left);
      else this.connected.delete(agentId);
    };
  }

  /**
   * The agent as `viewpoint` may see it: its current project only if the viewpoint sees that project,
   * and only the claimed tasks the viewpoint can see (CONTRACT §2.2a).
   */
  async toRecord(r: Reader, row: AgentRow, viewpoint: Viewpoint): Promise<AgentRecord> {
    const seenRecently = row.last_seen_at !== null && Date.now() - Date.parse(row.last_seen_at) < ONLINE_WINDOW_MS;
    const project = row.current_project;
    const projectVisible =
      project === null || viewpoint.allProjects || viewpoint.agentId === row.agent_id || (await this.store.projects.isMember(r, project, viewpoint.agentId));
    return {
      agent_id: row.agent_id,
      display_name: row.display_name,
      role: row.role,
      created_at: row.created_at,
      last_seen_at: row.last_seen_at,
      online: seenRecently || (this.connected.get(row.agent_id) ?? 0) > 0,
      current_project: projectVisible ? project : null,
      claimed_tasks: await this.store.tasks.claimedIds(r, row.agent_id, viewpoint),
    };
  }

  /** Checks `X-Agent-ID`/`X-API-Key`; a wrong id and a wrong key fail the same way, in the same time. */
  async authenticate(agentId: string, apiKey: string, address: string | undefined): Promise<Caller> {
    const row = await this.verifiedRow(agentId, apiKey, address);
    await this.touch(row);
    return { agentId: row.agent_id, role: row.role };
  }

  /**
   * The live agent whose key this is, or 401. Failures are throttled per address and agent id, and
   * an unknown id costs what a wrong key costs: the lookup reads a real row either way (another
   * agent's stands in for a missing one) and the key is compared in constant time.
   */
  async verifiedRow(agentId: string, apiKey: string, address: string | undefined): Promise<AgentRow & { key_hash: Buffer }> {
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

  /** A bearer token's agent, if the token is unexpired and was issued against its current key. */
  async authenticateToken(token: string): Promise<Caller> {
    const stored = await this.store.oauth.byHash(this.store.reader, hashKey(token));
    const row = stored ? await this.store.agents.get(this.store.reader, stored.agent_id) : undefined;
    const valid =
      stored !== undefined &&
      stored.expires_at > now() &&
      row !== undefined &&
      row.deleted_at === null &&
      row.key_hash !== null &&
      timingSafeEqual(row.key_hash, stored.key_hash);
    if (!valid) throw invalidCredentials();
    await this.touch(row);
    return { agentId: row.agent_id, role: row.role };
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

  /** Fixed identities: renaming or deleting them would break the UI, the archivist or configuration. */
  private isPinned(row: AgentRow): boolean {
    return (
      row.key_source === "static" ||
      row.agent_id === this.config.UI_AGENT_ID ||
      row.agent_id === this.config.ARCHIVIST_AGENT_ID
    );
  }

  private async liveRow(r: Reader, agentId: string): Promise<AgentRow> {
    const row = await this.store.agents.get(r, agentId);
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
      const reserved = agentId === this.config.UI_AGENT_ID || agentId === this.config.ARCHIVIST_AGENT_ID;
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
    const items: AgentRecord[] = [];
    for (const row of page.items) items.push(await this.toRecord(reader, row, viewpoint));
    return { ...page, items };
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
      const row = await this.liveRow(tx, targetId);
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
      const row = await this.liveRow(tx, targetId);
      if (this.isPinned(row)) {
        throw invalid("agent_id", "the UI, archivist and AGENT_KEYS identities are managed by configuration", "this agent cannot be deleted");
      }
      await this.store.agents.markDeleted(tx, row.agent_id, now());
      await this.store.oauth.deleteForAgent(tx, row.agent_id);
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

  async issueKey(targetId: string, actorId: string): Promise<string> {
    const apiKey = newApiKey();
    await this.store.transaction(async (tx) => {
      const row = await this.liveRow(tx, targetId);
      if (row.key_source === "static") {
        throw invalid("agent_id", "change AGENT_KEYS and restart instead", "this agent's key is set in AGENT_KEYS");
      }
      await this.store.agents.setKey(tx, targetId, hashKey(apiKey));
      // Tokens issued against the old key go with it.
      await this.store.oauth.deleteForAgent(tx, targetId);
      await this.bus.emit(tx, { type: "agent.key_rotated", agentId: actorId, project: null, payload: { agent_id: targetId } });
    });
    if (targetId === this.config.UI_AGENT_ID || targetId === this.config.ARCHIVIST_AGENT_ID) {
      // The credentials file is how the human and the archivist find their keys: keep it current.
      const agents = readCredentials(this.config.DATA_DIR)?.agents ?? {};
      const role: Role = targetId === this.config.UI_AGENT_ID ? "owner" : "archivist";
      agents[targetId] = { agent_id: targetId, role, api_key: apiKey };
      writeCredentials(this.config.DATA_DIR, this.config.PUBLIC_URL, agents);
    }
    return apiKey;
  }

  /**
   * Applies `AGENT_KEYS` and makes sure the UI (owner) and archivist identities exist, generating
   * keys into `credentials.json` only when it has to. Returns the file's path when it wrote it.
   */
  async bootstrap(): Promise<string | null> {
    const at = now();
    const staticIds = new Set(this.config.AGENT_KEYS.map((agent) => agent.agentId));
    const pinnedRole = (id: string, role: Role): Role =>
      id === this.config.UI_AGENT_ID ? "owner" : id === this.config.ARCHIVIST_AGENT_ID ? "archivist" : role;
    const stored = readCredentials(this.config.DATA_DIR)?.agents ?? {};
    const generated: Record<string, BootstrapCredential> = {};

    await this.store.transaction(async (tx) => {
      const agents = this.store.agents;
      for (const agent of this.config.AGENT_KEYS) {
        const role = pinnedRole(agent.agentId, agent.role);
        const row = await agents.get(tx, agent.agentId);
        if (row) {
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
          if (row.role !== role) await agents.setRole(tx, id, role);
          continue;
        }
        const apiKey = fromFile ?? newApiKey();
        if (fromFile === undefined) generated[id] = { agent_id: id, role, api_key: apiKey };
        if (row) {
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

  /** The archivist's key for the child process `serve` spawns, read from the credentials file. */
  bootstrapKey(agentId: string): string | undefined {
    return (
      this.config.AGENT_KEYS.find((agent) => agent.agentId === agentId)?.key ??
      readCredentials(this.config.DATA_DIR)?.agents[agentId]?.api_key
    );
  }
}
