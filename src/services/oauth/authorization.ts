import type { Config } from "../../core/config.js";
import { AGENT_ID_PATTERN } from "../../wire/ids.js";
import { AppError } from "../../core/errors.js";
import { newId } from "../../core/ids.js";
import { ConsentProblem, OAuthError } from "../../core/oauth-error.js";
import { now } from "../../core/time.js";
import type { EventBus } from "../../events/bus.js";
import type { GrantRow } from "../../store/oauth.js";
import type { Store } from "../../store/store.js";
import type { OAuthScope } from "../../wire/oauth.js";
import type { AgentService } from "../agents.js";
import { bootstrapRole } from "../bootstrap.js";
import type { Caller } from "../caller.js";
import { ownersAudience } from "../mesh/audience.js";
import type { ClientInfo, OAuthClients } from "./clients.js";
import { MAX_GRANTS, MAX_GRANTS_PER_CLIENT_AGENT, type OAuthGrants } from "./grants.js";
import { redirectHost, redirectUriMatches } from "./redirect-uris.js";
import { isOwnResource, requestedScopes, resourceOf, scopeString } from "./scopes.js";
import type { OAuthTokens } from "./tokens.js";

/** The query (or form) of an authorization request, as the transport read it. */
export type AuthorizationParams = Record<string, unknown>;

/** An authorization request that passed every check: what the consent page shows and the code is bound to. */
export interface CheckedAuthorization {
  client: ClientInfo;
  redirectUri: string;
  /** The request named the redirect URI (the token request must then name it too). */
  redirectExplicit: boolean;
  state: string | undefined;
  codeChallenge: string;
  scopes: OAuthScope[];
  /** This server's resource, `<PUBLIC_URL>/mcp`. */
  resource: string;
  /** What the consent page names: the metadata document's host, or where the code is sent. */
  clientHost: string;
}

/** An agent the consent page offers: the client may act as it. */
export interface OfferedAgent {
  agentId: string;
  displayName: string | null;
  role: "agent" | "viewer";
}

export type AgentChoice = { existing: string } | { create: string };

/** Agents the consent page lists at most (any other one may still be named). */
const OFFERED_AGENTS = 200;
const MAX_STATE_LENGTH = 2000;
/** RFC 7636: the S256 challenge is a SHA-256 in base64url, 43 characters. */
const CHALLENGE = /^[A-Za-z0-9_-]{43}$/;

/** `location` with the parameters added to its query (a private-use scheme's URI included). */
function redirectWith(location: string, params: Record<string, string | undefined>): string {
  const url = new URL(location);
  for (const [name, value] of Object.entries(params)) if (value !== undefined) url.searchParams.set(name, value);
  return url.href;
}

/**
 * The authorization endpoint's checks and the human's decision (CONTRACT §19). The client and its
 * redirect URI come first, and a failure there is shown, never redirected (an open redirector
 * otherwise); every later failure goes back to the client with `error`, `state` and `iss`.
 */
export class OAuthAuthorizations {
  constructor(
    private readonly store: Store,
    private readonly bus: EventBus,
    private readonly config: Config,
    private readonly clients: OAuthClients,
    private readonly grants: OAuthGrants,
    private readonly tokens: OAuthTokens,
    private readonly agents: AgentService,
    private readonly site: { url: string },
  ) {}

  /** The issuer: what metadata, `iss` and tokens name. */
  get issuer(): string {
    return this.site.url;
  }

  /**
   * Checks a request. Throws OAuthError without `redirect` for what the human must see (an unknown
   * client, a redirect URI not registered), and with it, carrying where to, for the rest.
   */
  async check(params: AuthorizationParams, address: string | undefined): Promise<CheckedAuthorization> {
    const single = (name: string): string | undefined => {
      const value = params[name];
      if (value === undefined || value === "") return undefined;
      if (typeof value !== "string") throw new OAuthError("invalid_request", `${name} is given more than once`);
      return value;
    };
    const clientId = single("client_id");
    if (clientId === undefined) throw new OAuthError("invalid_request", "the request names no client (client_id)");
    let client: ClientInfo;
    try {
      client = await this.clients.resolve(clientId, address);
    } catch (error) {
      if (error instanceof OAuthError) throw new OAuthError("invalid_client", error.description);
      throw error;
    }
    const presented = single("redirect_uri");
    if (presented === undefined && client.redirectUris.length !== 1) throw new OAuthError("invalid_request", "the request names no redirect_uri, and the client registered several");
    const redirectUri = presented ?? client.redirectUris[0] ?? "";
    if (!client.redirectUris.some((registered) => redirectUriMatches(registered, redirectUri))) {
      throw new OAuthError("invalid_request", "the redirect_uri is not one the client registered");
    }
    // From here on, refusals go back to the client.
    let state: string | undefined;
    const refuse = (error: string, description: string): OAuthError =>
      new OAuthError(error, description, 400, true).withLocation(redirectWith(redirectUri, { error, error_description: description, state, iss: this.issuer }));
    try {
      state = single("state");
    } catch {
      throw refuse("invalid_request", "state is given more than once");
    }
    if (state !== undefined && state.length > MAX_STATE_LENGTH) throw refuse("invalid_request", `state is longer than ${MAX_STATE_LENGTH} characters`);
    const read = (name: string): string | undefined => {
      try {
        return single(name);
      } catch {
        throw refuse("invalid_request", `${name} is given more than once`);
      }
    };
    const responseType = read("response_type");
    if (responseType !== "code") throw refuse("unsupported_response_type", 'response_type must be "code"');
    const challenge = read("code_challenge");
    const method = read("code_challenge_method");
    if (challenge === undefined) throw refuse("invalid_request", "PKCE is required: send code_challenge with code_challenge_method S256");
    if (method !== "S256") throw refuse("invalid_request", "code_challenge_method must be S256 (plain is not accepted)");
    if (!CHALLENGE.test(challenge)) throw refuse("invalid_request", "code_challenge is not an S256 challenge (43 base64url characters)");
    const resources = params.resource === undefined ? [] : Array.isArray(params.resource) ? params.resource : [params.resource];
    if (resources.some((resource) => typeof resource !== "string" || !isOwnResource(resource, this.site.url))) {
      throw refuse("invalid_target", "the resource is not this server's");
    }
    const scopes = requestedScopes(read("scope"));
    const clientHost = client.documentHost ?? redirectHost(redirectUri);
    return { client, redirectUri, redirectExplicit: presented !== undefined, state, codeChallenge: challenge, scopes, resource: resourceOf(this.site.url), clientHost };
  }

  /** Where a refusal by the human sends the browser. */
  denied(request: CheckedAuthorization): string {
    return redirectWith(request.redirectUri, { error: "access_denied", error_description: "the request was denied", state: request.state, iss: this.issuer });
  }

  /** Agents the client may be made to act as: agents and viewers, never the owner or the archivist. */
  async offeredAgents(): Promise<OfferedAgent[]> {
    const offered: OfferedAgent[] = [];
    for (let after: string | null = null; offered.length < OFFERED_AGENTS; ) {
      const rows = await this.store.agents.list(this.store.reader, after, 500);
      for (const row of rows) {
        if (offered.length < OFFERED_AGENTS && this.mayActAs(row.agent_id, row.role)) offered.push({ agentId: row.agent_id, displayName: row.display_name, role: row.role as "agent" | "viewer" });
      }
      if (rows.length < 500) break;
      after = rows.at(-1)?.agent_id ?? null;
    }
    return offered;
  }

  private mayActAs(agentId: string, role: string): boolean {
    return (role === "agent" || role === "viewer") && bootstrapRole(this.config, agentId) === undefined;
  }

  /**
   * The human allowed the request: the client will act as the chosen agent (created now if new),
   * with the scopes asked for (less `cairn:write` when the human unticked it). Returns where the
   * browser goes: the redirect URI with the code, the state and the issuer.
   */
  async allow(owner: Caller, request: CheckedAuthorization, choice: AgentChoice, allowWrite: boolean): Promise<string> {
    const agentId = "create" in choice ? choice.create : choice.existing;
    if (!AGENT_ID_PATTERN.test(agentId)) throw new ConsentProblem("an agent id is 1 to 64 lower-case letters, digits, - and _, starting with a letter or digit");
    if (bootstrapRole(this.config, agentId) !== undefined) throw new ConsentProblem("a client never acts as the owner or the archivist: choose another agent");
    if ("create" in choice) {
      try {
        await this.agents.create(agentId, null, "agent");
      } catch (error) {
        if (error instanceof AppError && (error.code === "CONFLICT" || error.code === "VALIDATION_FAILED")) throw new ConsentProblem(`cannot create agent ${agentId}: ${error.detail}`);
        throw error;
      }
    }
    const scopes = request.scopes.filter((scope) => scope !== "cairn:write" || allowWrite);
    const at = now();
    const code = await this.store.transaction(async (tx) => {
      const agent = await this.store.agents.get(tx, agentId);
      if (!agent || agent.deleted_at !== null) throw new ConsentProblem(`there is no agent ${agentId}`);
      if (!this.mayActAs(agent.agent_id, agent.role)) throw new ConsentProblem("a client never acts as the owner or the archivist: choose an agent or a viewer");
      await tx.lock("oauth-grants");
      if ((await this.store.oauth.countGrants(tx)) >= MAX_GRANTS) throw new ConsentProblem(`this server holds ${MAX_GRANTS} grants: revoke some first`);
      const earlier = await this.store.oauth.grantsOf(tx, request.client.clientId, agentId);
      for (const old of earlier.slice(MAX_GRANTS_PER_CLIENT_AGENT - 1)) await this.grants.revoke(tx, owner.agentId, old, "replaced");
      const grant: GrantRow = {
        id: newId(),
        client_id: request.client.clientId,
        client_name: request.client.name,
        client_host: request.clientHost,
        agent_id: agentId,
        agent_role: agent.role,
        scope: scopeString(scopes),
        resource: request.resource,
        created_by: owner.agentId,
        created_at: at,
        last_used_at: null,
      };
      await this.store.oauth.insertGrant(tx, grant);
      await this.bus.emit(tx, {
        type: "oauth.grant.created",
        agentId: owner.agentId,
        project: null,
        audience: await ownersAudience(this.store, tx),
        payload: { grant_id: grant.id, client_id: grant.client_id, agent_id: agentId, scopes },
      });
      return this.tokens.newCode(tx, grant, request.redirectUri, request.redirectExplicit, request.codeChallenge);
    });
    await this.clients.touch(request.client.clientId);
    return redirectWith(request.redirectUri, { code, state: request.state, iss: this.issuer });
  }
}
