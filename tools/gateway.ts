import { z } from "zod";
import type { Config } from "../src/core/config.js";
import { AppError, forbidden, internalError, invalidCredentials } from "../src/core/errors.js";
import type { Logger } from "../src/core/log.js";
import type { AgentService } from "../src/services/agents.js";
import type { BootstrapIdentities } from "../src/services/bootstrap.js";
import type { Caller } from "../src/services/caller.js";
import { requestHash } from "../src/services/idempotency.js";
import type { Services } from "../src/services/index.js";
import type { MetricsService } from "../src/services/metrics.js";
import type { AgentChoice, CheckedAuthorization, OAuthAuthorizations, OfferedAgent } from "../src/services/oauth/authorization.js";
import type { ClientInfo, OAuthClients } from "../src/services/oauth/clients.js";
import type { OAuthTokens } from "../src/services/oauth/tokens.js";
import type { UiSessionService } from "../src/services/ui-sessions.js";
import { isMeshToken, meshTokenRefused } from "../src/services/mesh/tokens.js";
import { catalogue } from "./catalogue.js";
import { BODILESS_STATUSES, isReadOnlyKind, type Operation, type Outcome, type Ran } from "./operation.js";

// Adapters reach service types through here, never by importing src/services (DESIGN §1).
export type { AgentChoice, Caller, CheckedAuthorization, ClientInfo, OfferedAgent,  };

/**
 * OAuth's routes (CONTRACT §19): the token endpoint's grants, registration, revocation, and the
 * authorization endpoint's checks and consent. They speak OAuth's wire format, not the catalogue's.
 */
export interface OAuthPort {
  issue: OAuthTokens["issue"];
  exchangeCode: OAuthTokens["exchangeCode"];
  refresh: OAuthTokens["refresh"];
  revoke: OAuthTokens["revoke"];
  register: OAuthClients["register"];
  authenticateClient: OAuthClients["authenticate"];
  checkAuthorization: OAuthAuthorizations["check"];
  offeredAgents: OAuthAuthorizations["offeredAgents"];
  allow: OAuthAuthorizations["allow"];
  denied: OAuthAuthorizations["denied"];
}

/** The web UI's sign-in, for its routes (src/http/ui.ts) and the link printed at start. */
export type UiSessionPort = Pick<UiSessionService, "passwordLogin" | "login" | "logout" | "issueLoginLink" | "loginLinkIsLive">;

/** What the operator's commands do to a data directory that are not API operations. */
export interface MaintenancePort {
  /** A new agent with a fresh key (`cairn agent add`). */
  createAgent: AgentService["create"];
  /** A new key for an agent (`cairn agent rotate-key`): the old one stops working at once. */
  issueKey(agentId: string): Promise<string>;
  /** The key `cairn serve` starts the archivist with, from AGENT_KEYS or the credentials file. */
  bootstrapKey: BootstrapIdentities["keyFor"];
  /** A one-time web UI sign-in link (`cairn ui-link`). */
  issueLoginLink: UiSessionService["issueLoginLink"];
  /** A consistent copy of the database (`cairn backup`); returns its size in pages. */
  backup(file: string): Promise<number>;
  /** Waits up to `ms` for the embedding model to load; says where it stands then. */
  modelSettled(ms: number): Promise<"loading" | "ready" | "unavailable">;
  /** Re-embeds every entry with the current model (`cairn reindex`); returns how many. */
  reindex(onProgress: (done: number) => void): Promise<number>;
  /** Applies event retention as of `before` now, as the hourly job does; returns how many events went. */
  pruneEvents(before: string): Promise<number>;
  /** Forgets idle web UI sessions and expired sign-in links now, as the hourly job does; returns how many. */
  pruneUiSessions(): Promise<number>;
}

export interface Credentials {
  /** From the `X-Agent-ID` and `X-API-Key` headers, or the query string where a route takes it there. */
  agentId?: string | undefined;
  apiKey?: string | undefined;
  /** A peer's mesh token from the query (`mesh_token`), on the routes that take credentials there. */
  meshToken?: string | undefined;
  /** The Authorization header: `Bearer <token>` from POST /oauth/token, or a peer's mesh token. */
  authorization?: string | undefined;
  /** A web UI session from POST /ui/login (the `x-ui-session` header or the session cookie). */
  uiSession?: string | undefined;
  /** The client's address: failed key checks are throttled per address and claimed identity. */
  address?: string | undefined;
}

/** `Idempotency-Key` on REST, `_meta.idempotency_key` on MCP: one rule for both. */
export const idempotencyKey = z
  .string({ error: "must be a string of 1 to 200 characters" })
  .min(1, "must be 1 to 200 characters")
  .max(200, "must be 1 to 200 characters")
  .optional();

/**
 * `X-Archivist-Lease` as the token it names. A malformed one becomes a token no lease ever has
 * (they count up from 0): a write it fences is refused as stale, as one with a wrong number is,
 * and a request it does not fence is not troubled by it.
 */
export const leaseToken = z
  .string()
  .regex(/^\d{1,15}$/)
  .transform(Number)
  .catch(-1)
  .optional();

export interface Invocation {
  caller: Caller | null;
  /** Already validated with the operation's input schema. */
  input: unknown;
  requestId: string;
  registrationKey?: string | undefined;
  /** Already parsed with `idempotencyKey`. */
  idempotencyKey?: string | undefined;
  /** The archivist's fencing token (parsed with `leaseToken`): its writes run only while it is current. */
  leaseToken?: number | undefined;
  /** The client's address, for throttling failed registration keys. */
  address?: string | undefined;
}

export interface InvocationResult extends Outcome {
  replayed: boolean;
}

/** What a refused request's handler returned: nothing any transaction returns. */
const REFUSED = Symbol("refused");

/**
 * The outcome as it leaves the server: the body as the output schema shapes it (unknown fields
 * dropped), nothing for a 204; or what keeps the body from matching the schema.
 */
/** A list operation's output schema, made once: a schema built per request cost five times its parse. */
const listSchemas = new WeakMap<z.ZodType, z.ZodType>();
const listOf = (item: z.ZodType): z.ZodType => {
  let schema = listSchemas.get(item);
  if (!schema) {
    schema = z.array(item);
    listSchemas.set(item, schema);
  }
  return schema;
};

function shaped(operation: Operation, outcome: Outcome): { outcome: Outcome } | { issues: z.core.$ZodIssue[] } {
  // A stream's items are checked by nothing but the services that build them: the transport pulls them later.
  if (operation.kind === "stream") return { outcome };
  if (operation.output === undefined || BODILESS_STATUSES.has(outcome.status)) return { outcome: { ...outcome, body: undefined } };
  const schema = operation.kind === "list" ? listOf(operation.output) : operation.output;
  const parsed = schema.safeParse(outcome.body);
  return parsed.success ? { outcome: { ...outcome, body: parsed.data } } : { issues: parsed.error.issues };
}

/**
 * The one path from a transport to the services: authentication, role rules, rate limits,
 * idempotency, and the output schema as the last word on what leaves the server. Besides running
 * operations, transports get exactly the narrow ports below, never the services themselves; the
 * composition root (src/app.ts) builds the services and hands them in.
 */
export class OperationGateway {
  readonly operations = catalogue;
  readonly config: Config;
  readonly log: Logger;
  readonly ui: UiSessionPort;
  readonly oauth: OAuthPort;
  readonly metrics: Pick<MetricsService, "snapshot" | "eventCounts" | "served" | "tokensServed">;
  readonly maintenance: MaintenancePort;

  constructor(private readonly services: Services) {
    this.config = services.config;
    this.log = services.log;
    this.ui = services.uiSessions;
    const { tokens, clients, authorizations } = services.oauth;
    this.oauth = {
      issue: (...args) => tokens.issue(...args),
      exchangeCode: (...args) => tokens.exchangeCode(...args),
      refresh: (...args) => tokens.refresh(...args),
      revoke: (...args) => tokens.revoke(...args),
      register: (...args) => clients.register(...args),
      authenticateClient: (...args) => clients.authenticate(...args),
      checkAuthorization: (...args) => authorizations.check(...args),
      offeredAgents: () => authorizations.offeredAgents(),
      allow: (...args) => authorizations.allow(...args),
      denied: (...args) => authorizations.denied(...args),
    };
    this.metrics = services.metrics;
    this.maintenance = {
      createAgent: (agentId, displayName, role) => services.agents.create(agentId, displayName, role),
      issueKey: (agentId) => services.agents.issueKey(agentId, agentId),
      bootstrapKey: (agentId) => services.bootstrap.keyFor(agentId),
      issueLoginLink: () => services.uiSessions.issueLoginLink(),
      backup: (file) => services.store.maintenance.backupTo(file),
      modelSettled: (ms) => services.embeddingQueue.settled(ms),
      reindex: (onProgress) => services.embeddings.reindexAll(onProgress),
      pruneEvents: (before) => services.events.prune(before),
      pruneUiSessions: () => services.uiSessions.pruneIdle(),
    };
  }

  /** Where clients reach this server, once it knows the address it listens on. */
  setPublicUrl(url: string): void {
    this.services.site.url = url;
  }

  /**
   * The server listens on `port`, at the public URL set before: it may now be announced (mDNS).
   * Resolves once the start is over (the embedding model loaded): the time for warm-ups.
   */
  listening(port: number): Promise<void> {
    return this.services.listening(port);
  }

  /** Every event after its transaction commits (MCP resource subscriptions watch for changes). */
  onEvent(listener: (event: { type: string }) => void): () => void {
    return this.services.bus.subscribe(listener);
  }

  /**
   * How long each transaction held the events' lock (seconds), where the store has one
   * (PostgreSQL); false where it has none. The function given stops the listening.
   */
  onEventsLockHeld(listener: (seconds: number) => void): (() => void) | false {
    return this.services.store.eventsLock?.onHeld(listener) ?? false;
  }

  /** Reads of the shared event log this process has made to follow the other servers' events; false where the store has no shared log (SQLite). */
  eventLogReads(): number | false {
    return this.services.store.eventWakeups ? this.services.bus.logReads : false;
  }

  /** Counts a request against the agent's rate limit, for routes outside the catalogue (/metrics). */
  takeRequest(agentId: string): Promise<void> {
    return this.services.rateLimiter.take(agentId);
  }

  /** Entries held by the in-memory tables that unauthenticated traffic reaches (CONTRACT §2.2a). */
  tableSizes(): { throttle: number; rateLimiter: number } {
    return { throttle: this.services.throttle.size, rateLimiter: this.services.rateLimiter.size };
  }

  /** Agent id and key first (CONTRACT §2.2), then a bearer token, then a UI session; nothing valid is 401. */
  authenticate(credentials: Credentials): Promise<Caller> {
    if (credentials.agentId || credentials.apiKey) {
      if (!credentials.agentId || !credentials.apiKey) return Promise.reject(invalidCredentials());
      return this.services.auth.authenticateKey(credentials.agentId, credentials.apiKey, credentials.address);
    }
    const bearer = /^Bearer\s+(\S+)$/i.exec(credentials.authorization ?? "")?.[1];
    if (bearer !== undefined && isMeshToken(bearer)) return this.services.meshTokens.authenticate(bearer);
    if (bearer !== undefined) return this.services.auth.authenticateToken(bearer);
    if (credentials.meshToken) return this.services.meshTokens.authenticate(credentials.meshToken);
    if (credentials.uiSession) return this.services.uiSessions.authenticate(credentials.uiSession);
    return Promise.reject(invalidCredentials());
  }

  /** A peer presenting a mesh token where only agents are served (MCP, /metrics): 403. */
  refuseMeshCaller(caller: Caller): void {
    if (caller.mesh) throw meshTokenRefused();
  }

  /**
   * The rules of the caller's role: a viewer only reads, and an operation for some roles refuses
   * the others (403). Transports call it before they read the input, so a caller without the role
   * learns nothing about what the input should be; `invoke` calls it again for any other caller.
   */
  authorize(operation: Operation, caller: Caller | null): void {
    if (operation.access !== "agent") return;
    if (!caller) throw invalidCredentials();
    if (caller.mesh) {
      // A peer acts as no agent: only the routes built for peers let it in, each for its capabilities.
      if (!operation.mesh) throw meshTokenRefused();
      const granted = caller.mesh.capabilities;
      if (!operation.mesh.some((capability) => granted.includes(capability))) {
        throw forbidden(`this mesh token lacks the ${operation.mesh.join(" or ")} capability`);
      }
      return;
    }
    if (caller.readOnlyScope && !isReadOnlyKind(operation.kind)) {
      throw new AppError("FORBIDDEN", "this token's scope is cairn:read: it cannot make changes", { scopeRequired: "cairn:write" });
    }
    if (caller.role === "viewer" && !isReadOnlyKind(operation.kind)) throw forbidden("viewers cannot make changes");
    if (operation.roles && !operation.roles.includes(caller.role)) {
      throw forbidden(`this operation requires the ${operation.roles.join(" or ")} role`);
    }
  }

  async invoke(operation: Operation, invocation: Invocation): Promise<InvocationResult> {
    const { caller } = invocation;
    this.authorize(operation, caller);
    if (operation.access === "agent" && caller) await this.services.rateLimiter.take(caller.agentId);
    const fencingToken = caller?.role === "archivist" && !isReadOnlyKind(operation.kind) ? invocation.leaseToken : undefined;
    const execute =
      fencingToken === undefined
        ? () => this.execute(operation, invocation)
        : () => this.services.archivist.fenced(fencingToken, () => this.execute(operation, invocation));
    if (caller && invocation.idempotencyKey !== undefined && operation.http.method === "POST") {
      const hash = requestHash(operation.name, invocation.input);
      const replyOf = (result: unknown): Outcome | null => {
        const reply = shaped(operation, operation.outcomeOf(result, invocation.input));
        return "outcome" in reply ? reply.outcome : null;
      };
      const { reply, replayed } = await this.services.idempotency.run(caller.agentId, invocation.idempotencyKey, hash, { name: operation.name, replyOf }, async () => {
        try {
          const { status, body, headers, result } = await execute();
          return { reply: { status, body, headers }, result };
        } catch (error) {
          // A refusal is the request's answer too: a retry gets the same one.
          if (error instanceof AppError && error.status < 500 && error.status !== 429) {
            return { reply: { status: error.status, body: error.toBody(), headers: {} }, result: REFUSED };
          }
          throw error;
        }
      });
      return { ...reply, replayed };
    }
    return { ...(await execute()), replayed: false };
  }

  private async execute(operation: Operation, invocation: Invocation): Promise<Ran> {
    const context = invocation.caller
      ? { services: this.services, caller: invocation.caller, requestId: invocation.requestId }
      : { services: this.services, caller: null, requestId: invocation.requestId, registrationKey: invocation.registrationKey, address: invocation.address };
    const ran = await operation.run(context, invocation.input);
    const reply = shaped(operation, ran);
    if ("issues" in reply) {
      this.services.log.error("response does not match its schema", { operation: operation.name, request_id: invocation.requestId, issues: reply.issues.slice(0, 5) });
      throw internalError();
    }
    return { ...reply.outcome, result: ran.result };
  }

  close(): Promise<void> {
    return this.services.close();
  }
}
