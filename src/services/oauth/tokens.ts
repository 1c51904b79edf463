import { createHash, randomBytes } from "node:crypto";
import { invalidGrant, invalidRequest, OAuthError } from "../../core/oauth-error.js";
import { addSeconds, now } from "../../core/time.js";
import type { GrantRow } from "../../store/oauth.js";
import type { Store, Tx } from "../../store/store.js";
import type { AuthService } from "../auth.js";
import { hashKey } from "../credentials.js";
import type { RateLimiter } from "../rate-limit.js";
import { CLIENT_TOUCH_INTERVAL_MS, type ClientInfo } from "./clients.js";
import type { OAuthGrants } from "./grants.js";
import { redirectUriMatches } from "./redirect-uris.js";
import { isOwnResource, resourceOf, scopesOf, scopeString } from "./scopes.js";

/** An access token lives an hour. */
const TOKEN_SECONDS = 3600;
/** An authorization code, a minute. */
export const CODE_SECONDS = 60;
/** A refresh token, thirty days from its issue; each use gives a new one (sliding). */
const REFRESH_SECONDS = 30 * 86400;
/** Used refresh tokens a grant keeps, to recognise one presented again. */
const USED_REFRESH_KEPT = 20;
/** Live access tokens a grant keeps; refreshing past it revokes the oldest. */
const GRANT_ACCESS_TOKENS = 10;

const ACCESS_PREFIX = "cairn_at_";
const REFRESH_PREFIX = "cairn_rt_";
const CODE_PREFIX = "cairn_ac_";
const secret = (prefix: string): string => `${prefix}${randomBytes(32).toString("base64url")}`;
/** RFC 7636 §4.1: 43 to 128 unreserved characters. */
const VERIFIER = /^[A-Za-z0-9._~-]{43,128}$/;

export interface IssuedToken {
  access_token: string;
  token_type: "bearer";
  expires_in: number;
  refresh_token?: string;
  scope?: string;
}

export interface CodeExchange {
  code: string;
  redirectUri: string | undefined;
  codeVerifier: string | undefined;
  resource: string | undefined;
}

export interface RefreshRequest {
  refreshToken: string;
  scope: string | undefined;
  resource: string | undefined;
}

const invalidTarget = (): OAuthError => new OAuthError("invalid_target", "the resource is not this server's (its metadata names the resource)");

/**
 * The token endpoint's grants (CONTRACT §19): client credentials (an agent's id and key buy an
 * hour), an authorization code (redeemed exactly once: a conditional update decides, on any number
 * of servers), and refresh tokens (rotated on every use). A code or refresh token presented again
 * revokes its grant and every token issued from it. Only hashes are stored.
 */
export class OAuthTokens {
  constructor(
    private readonly store: Store,
    private readonly auth: AuthService,
    private readonly rateLimiter: RateLimiter,
    private readonly grants: OAuthGrants,
    private readonly site: { url: string },
  ) {}

  /**
   * Throws UNAUTHENTICATED for a wrong pair (the route turns it into `invalid_client`); failures
   * count against the address and client id like a wrong API key, since the secret is the key.
   */
  async issue(clientId: string, clientSecret: string, address: string | undefined, resource?: string): Promise<IssuedToken> {
    if (resource !== undefined && !isOwnResource(resource, this.site.url)) throw invalidTarget();
    const agent = await this.auth.verifyKey(clientId, clientSecret, address);
    // A token costs a write: issuing counts against the agent's rate limit like any request.
    await this.rateLimiter.take(agent.agent_id);
    const token = secret(ACCESS_PREFIX);
    const issuedAt = now();
    await this.store.transaction((tx) =>
      this.store.oauth.insert(tx, {
        token_hash: hashKey(token),
        agent_id: agent.agent_id,
        key_hash: agent.key_hash,
        grant_id: null,
        scope: "cairn:read cairn:write",
        // Bought with the agent's key, it is for this server's database whatever its URL, unless the
        // client named the resource (then it is bound to it, as a grant's tokens are).
        resource: resource === undefined ? null : resourceOf(this.site.url),
        created_at: issuedAt,
        expires_at: addSeconds(issuedAt, TOKEN_SECONDS),
      }),
    );
    return { access_token: token, token_type: "bearer", expires_in: TOKEN_SECONDS };
  }

  /** A new code for a grant just consented to; the code itself is returned once and kept as a hash. */
  async newCode(tx: Tx, grant: GrantRow, redirectUri: string, explicit: boolean, challenge: string): Promise<string> {
    const code = secret(CODE_PREFIX);
    const at = now();
    await this.store.oauth.insertCode(tx, {
      code_hash: hashKey(code),
      grant_id: grant.id,
      client_id: grant.client_id,
      redirect_uri: redirectUri,
      redirect_explicit: explicit ? 1 : 0,
      code_challenge: challenge,
      created_at: at,
      expires_at: addSeconds(at, CODE_SECONDS),
      used_at: null,
    });
    return code;
  }

  /**
   * Redeems a code. Whatever is wrong with the request (verifier, redirect URI, resource, client)
   * rolls the redemption back, so the code stays for the right request; a code already redeemed is
   * reuse, and revokes its grant.
   */
  async exchangeCode(client: ClientInfo, request: CodeExchange): Promise<IssuedToken> {
    if (request.codeVerifier === undefined) throw invalidRequest("code_verifier is required (PKCE)");
    if (!VERIFIER.test(request.codeVerifier)) throw invalidGrant("the code_verifier is not a PKCE verifier");
    if (request.resource !== undefined && !isOwnResource(request.resource, this.site.url)) throw invalidTarget();
    const verifier = request.codeVerifier;
    const hash = hashKey(request.code);
    const at = now();
    const outcome = await this.store.transaction(async (tx): Promise<IssuedToken | { refused: string }> => {
      const code = await this.store.oauth.redeemCode(tx, hash, at);
      if (!code) {
        const known = await this.store.oauth.code(tx, hash);
        if (known === undefined || known.used_at === null) return { refused: "unknown or expired authorization code" };
        const grant = await this.store.oauth.grant(tx, known.grant_id);
        if (grant) await this.grants.revoke(tx, grant.agent_id, grant, "code_reused");
        return { refused: "this authorization code was used already: every token issued from it is revoked" };
      }
      if (code.expires_at <= at) throw invalidGrant("the authorization code has expired");
      if (code.client_id !== client.clientId) throw invalidGrant("the authorization code was issued to another client");
      if (request.redirectUri === undefined ? code.redirect_explicit === 1 : !redirectUriMatches(code.redirect_uri, request.redirectUri)) {
        throw invalidGrant("redirect_uri is not the one of the authorization request");
      }
      const challenge = createHash("sha256").update(verifier, "ascii").digest("base64url");
      if (challenge !== code.code_challenge) {
        throw invalidGrant("the code_verifier does not match the code_challenge");
      }
      const grant = await this.liveGrant(tx, code.grant_id);
      return this.issueFromGrant(tx, grant, grant.scope, at);
    });
    if ("refused" in outcome) throw invalidGrant(outcome.refused);
    return outcome;
  }

  /** Rotates a refresh token: the one presented is spent, a new one comes back; presenting it again revokes the grant. */
  async refresh(client: ClientInfo, request: RefreshRequest): Promise<IssuedToken> {
    if (request.resource !== undefined && !isOwnResource(request.resource, this.site.url)) throw invalidTarget();
    const hash = hashKey(request.refreshToken);
    const at = now();
    const outcome = await this.store.transaction(async (tx): Promise<IssuedToken | { refused: string }> => {
      const spent = await this.store.oauth.rotateRefresh(tx, hash, at);
      if (!spent) {
        const known = await this.store.oauth.refresh(tx, hash);
        if (known === undefined || known.used_at === null) return { refused: "unknown or expired refresh token" };
        const grant = await this.store.oauth.grant(tx, known.grant_id);
        if (grant) await this.grants.revoke(tx, grant.agent_id, grant, "refresh_reused");
        return { refused: "this refresh token was used already: its grant and every token of it are revoked" };
      }
      if (spent.expires_at <= at) throw invalidGrant("the refresh token has expired");
      const grant = await this.liveGrant(tx, spent.grant_id);
      if (grant.client_id !== client.clientId) throw invalidGrant("the refresh token was issued to another client");
      const held = scopesOf(spent.scope);
      const asked = request.scope === undefined ? held : request.scope.split(/\s+/).filter(Boolean);
      if (asked.length === 0 || asked.some((scope) => !held.includes(scope as (typeof held)[number]))) {
        throw new OAuthError("invalid_scope", `a refresh may only narrow the scopes (${spent.scope})`);
      }
      return this.issueFromGrant(tx, grant, scopeString(held.filter((scope) => asked.includes(scope))), at, spent.scope);
    });
    if ("refused" in outcome) throw invalidGrant(outcome.refused);
    return outcome;
  }

  /** The grant, if it and its agent are as they were at consent; otherwise the request is refused. */
  private async liveGrant(tx: Tx, grantId: string): Promise<GrantRow> {
    const grant = await this.store.oauth.grant(tx, grantId);
    if (!grant) throw invalidGrant("the grant was revoked");
    const agent = await this.store.agents.get(tx, grant.agent_id);
    if (!agent || agent.deleted_at !== null || agent.role !== grant.agent_role) throw invalidGrant("the grant's agent is gone or has another role");
    return grant;
  }

  /** An access token of `scope` and a refresh token of `refreshScope` (the grant's, unless narrowed before). */
  private async issueFromGrant(tx: Tx, grant: GrantRow, scope: string, at: string, refreshScope = grant.scope): Promise<IssuedToken> {
    const access = secret(ACCESS_PREFIX);
    const refresh = secret(REFRESH_PREFIX);
    await this.store.oauth.insert(tx, {
      token_hash: hashKey(access),
      agent_id: grant.agent_id,
      key_hash: null,
      grant_id: grant.id,
      scope,
      resource: grant.resource,
      created_at: at,
      expires_at: addSeconds(at, TOKEN_SECONDS),
    });
    await this.store.oauth.insertRefresh(tx, { token_hash: hashKey(refresh), grant_id: grant.id, scope: refreshScope, created_at: at, expires_at: addSeconds(at, REFRESH_SECONDS), used_at: null });
    await this.store.oauth.trimUsedRefresh(tx, grant.id, USED_REFRESH_KEPT);
    await this.store.oauth.trimGrantTokens(tx, grant.id, GRANT_ACCESS_TOKENS);
    await this.store.oauth.touchGrant(tx, grant.id, at);
    // A token request is a use of the client as much as an authorization: what keeps it from expiring.
    await this.store.oauth.touchClient(tx, grant.client_id, at, new Date(Date.parse(at) - CLIENT_TOUCH_INTERVAL_MS).toISOString());
    return { access_token: access, token_type: "bearer", expires_in: TOKEN_SECONDS, refresh_token: refresh, scope };
  }

  /**
   * RFC 7009: a refresh token revokes its grant (and with it every token of the grant), an access
   * token itself. A token of another client, or none at all, changes nothing: the answer is the same.
   */
  async revoke(token: string, client: ClientInfo | null): Promise<void> {
    const hash = hashKey(token);
    await this.store.transaction(async (tx) => {
      const refresh = await this.store.oauth.refresh(tx, hash);
      if (refresh) {
        const grant = await this.store.oauth.grant(tx, refresh.grant_id);
        if (grant && (client === null || grant.client_id === client.clientId)) await this.grants.revoke(tx, grant.agent_id, grant, "client");
        return;
      }
      const access = await this.store.oauth.byHash(tx, hash);
      if (!access) return;
      const grant = access.grant_id === null ? undefined : await this.store.oauth.grant(tx, access.grant_id);
      if (access.grant_id === null || client === null || grant?.client_id === client.clientId) await this.store.oauth.deleteToken(tx, hash);
    });
  }
}
