import * as oauth from "oauth4webapi";
import { describe, expect } from "vitest";
import { it } from "../helpers/fixtures.js";
import { authorizeUrl, consent, OWNER_PASSWORD, pkce, register, signIn, tokenRequest } from "../helpers/oauth.js";
import type { TestServer } from "../helpers/server.js";

// A strict, independent OAuth client (oauth4webapi) against the code flow: discovery, dynamic
// registration, PKCE, the iss check, refresh and revocation, public and confidential (CONTRACT §19).

const insecure = { [oauth.allowInsecureRequests]: true } as const;

async function discover(server: TestServer): Promise<oauth.AuthorizationServer> {
  const issuer = new URL(server.url);
  return oauth.processDiscoveryResponse(issuer, await oauth.discoveryRequest(issuer, { algorithm: "oauth2", ...insecure }));
}

/** Runs the authorization step as a browser would, with the human allowing `agent`; the callback URL. */
async function authorize(server: TestServer, as: oauth.AuthorizationServer, client: oauth.Client, redirectUri: string, agent: string, state: string, challenge: string): Promise<URL> {
  const url = new URL(as.authorization_endpoint as string);
  url.search = new URLSearchParams({
    client_id: client.client_id,
    redirect_uri: redirectUri,
    response_type: "code",
    scope: "cairn:read cairn:write",
    state,
    code_challenge: challenge,
    code_challenge_method: "S256",
    resource: `${server.url}/mcp`,
  }).toString();
  return consent(server.url, url.href, await signIn(server.url), { agent });
}

const bearer = (token: string) => ({ headers: { authorization: `Bearer ${token}` } });

describe("OAuth code flow with oauth4webapi", () => {
  it.override("serverEnv", { UI_PASSWORD: OWNER_PASSWORD });

  it("a public client: registration, code with PKCE and iss, refresh, and revocation of the refresh token killing the grant", async ({ server }) => {
    await server.agent("o4w-public");
    const as = await discover(server);
    const redirectUri = "http://127.0.0.1:49001/cb";
    const registered = await oauth.processDynamicClientRegistrationResponse(
      await oauth.dynamicClientRegistrationRequest(as, { redirect_uris: [redirectUri], token_endpoint_auth_method: "none", client_name: "oauth4webapi public" }, insecure),
    );
    const client: oauth.Client = { client_id: registered.client_id };
    const verifier = oauth.generateRandomCodeVerifier();
    const state = oauth.generateRandomState();
    const callback = await authorize(server, as, client, redirectUri, "o4w-public", state, await oauth.calculatePKCECodeChallenge(verifier));
    const params = oauth.validateAuthResponse(as, client, callback, state);
    const tokens = await oauth.processAuthorizationCodeResponse(
      as,
      client,
      await oauth.authorizationCodeGrantRequest(as, client, oauth.None(), params, redirectUri, verifier, { ...insecure, additionalParameters: { resource: `${server.url}/mcp` } }),
    );
    expect(tokens).toMatchObject({ token_type: "bearer", expires_in: 3600, scope: "cairn:read cairn:write" });
    expect(tokens.access_token).toMatch(/^cairn_at_/);
    const me = await fetch(`${server.url}/agents/me`, bearer(tokens.access_token));
    expect(((await me.json()) as { agent_id: string }).agent_id).toBe("o4w-public");

    const refreshed = await oauth.processRefreshTokenResponse(as, client, await oauth.refreshTokenGrantRequest(as, client, oauth.None(), tokens.refresh_token as string, insecure));
    expect(refreshed.refresh_token).not.toBe(tokens.refresh_token);
    expect((await fetch(`${server.url}/agents/me`, bearer(refreshed.access_token))).status).toBe(200);
    // Narrowing on refresh: the access token is read-only, the refresh token keeps both scopes.
    const narrowed = await oauth.processRefreshTokenResponse(
      as,
      client,
      await oauth.refreshTokenGrantRequest(as, client, oauth.None(), refreshed.refresh_token as string, { ...insecure, additionalParameters: { scope: "cairn:read" } }),
    );
    expect(narrowed.scope).toBe("cairn:read");
    const widened = await tokenRequest(server.url, { grant_type: "refresh_token", refresh_token: narrowed.refresh_token as string, client_id: client.client_id, scope: "cairn:read cairn:write other:scope" });
    expect(widened.body.error).toBe("invalid_scope");

    // Revoking the refresh token revokes its grant: every access token of it stops working.
    await oauth.processRevocationResponse(await oauth.revocationRequest(as, client, oauth.None(), narrowed.refresh_token as string, insecure));
    expect((await fetch(`${server.url}/agents/me`, bearer(narrowed.access_token))).status).toBe(401);
    expect((await fetch(`${server.url}/agents/me`, bearer(refreshed.access_token))).status).toBe(401);
    // RFC 7009: unknown tokens are answered 200 all the same.
    await oauth.processRevocationResponse(await oauth.revocationRequest(as, client, oauth.None(), "cairn_rt_never-issued", insecure));
  });

  it("a confidential client with client_secret_basic, and client_secret_post; a wrong secret is invalid_client", async ({ server }) => {
    await server.agent("o4w-confidential");
    const as = await discover(server);
    const redirectUri = "https://app.example/oauth/callback";
    for (const method of ["client_secret_basic", "client_secret_post"] as const) {
      const registered = await oauth.processDynamicClientRegistrationResponse(
        await oauth.dynamicClientRegistrationRequest(as, { redirect_uris: [redirectUri], token_endpoint_auth_method: method, client_name: `oauth4webapi ${method}` }, insecure),
      );
      const secret = registered.client_secret as string;
      const client: oauth.Client = { client_id: registered.client_id };
      const clientAuth = method === "client_secret_basic" ? oauth.ClientSecretBasic(secret) : oauth.ClientSecretPost(secret);
      const verifier = oauth.generateRandomCodeVerifier();
      const state = oauth.generateRandomState();
      const callback = await authorize(server, as, client, redirectUri, "o4w-confidential", state, await oauth.calculatePKCECodeChallenge(verifier));
      const params = oauth.validateAuthResponse(as, client, callback, state);
      const wrong = await oauth.authorizationCodeGrantRequest(as, client, oauth.ClientSecretPost("cairn_cs_wrong"), params, redirectUri, verifier, insecure);
      expect(wrong.status).toBe(401);
      expect(((await wrong.json()) as { error: string }).error).toBe("invalid_client");
      const tokens = await oauth.processAuthorizationCodeResponse(as, client, await oauth.authorizationCodeGrantRequest(as, client, clientAuth, params, redirectUri, verifier, insecure));
      expect((await fetch(`${server.url}/agents/me`, bearer(tokens.access_token))).status).toBe(200);
      // The access token alone can be revoked too.
      await oauth.processRevocationResponse(await oauth.revocationRequest(as, client, clientAuth, tokens.access_token, insecure));
      expect((await fetch(`${server.url}/agents/me`, bearer(tokens.access_token))).status).toBe(401);
      const refreshed = await oauth.processRefreshTokenResponse(as, client, await oauth.refreshTokenGrantRequest(as, client, clientAuth, tokens.refresh_token as string, insecure));
      expect((await fetch(`${server.url}/agents/me`, bearer(refreshed.access_token))).status).toBe(200);
    }
  });
});

describe("OAuth flows shaped as real hosts run them", () => {
  it.override("serverEnv", { UI_PASSWORD: OWNER_PASSWORD });

  it("Claude Code: registers 127.0.0.1, authorizes and redeems with localhost on the same port", async ({ server }) => {
    await server.agent("claude-code");
    const registered = await register(server.url, {
      client_name: "Claude Code (cairn)",
      redirect_uris: ["http://127.0.0.1:51234/callback"],
      grant_types: ["authorization_code", "refresh_token"],
      response_types: ["code"],
      token_endpoint_auth_method: "none",
    });
    const clientId = registered.body.client_id as string;
    const { verifier, challenge } = pkce();
    const redirect = "http://localhost:51234/callback";
    const back = await consent(server.url, authorizeUrl(server.url, { client_id: clientId, redirect_uri: redirect, code_challenge: challenge, state: "cc", resource: `${server.url}/mcp` }), await signIn(server.url), { agent: "claude-code" });
    expect(`${back.origin}${back.pathname}`).toBe(redirect);
    const tokens = await tokenRequest(server.url, { grant_type: "authorization_code", code: back.searchParams.get("code") as string, code_verifier: verifier, redirect_uri: redirect, client_id: clientId, resource: `${server.url}/mcp` });
    expect(tokens.status).toBe(200);
  });

  it("Cursor: a private-use scheme redirect gets the code on its own URI", async ({ server }) => {
    await server.agent("cursor-agent");
    const uris = ["cursor://anysphere.cursor-mcp/oauth/callback", "http://localhost:36789/callback", "http://127.0.0.1:36789/callback"];
    const registered = await register(server.url, { client_name: "Cursor", redirect_uris: uris, token_endpoint_auth_method: "none", application_type: "web" });
    const clientId = registered.body.client_id as string;
    const { verifier, challenge } = pkce();
    const back = await consent(server.url, authorizeUrl(server.url, { client_id: clientId, redirect_uri: uris[0] as string, code_challenge: challenge, state: "cu" }), await signIn(server.url), { agent: "cursor-agent" });
    expect(back.protocol).toBe("cursor:");
    expect(back.host).toBe("anysphere.cursor-mcp");
    const tokens = await tokenRequest(server.url, { grant_type: "authorization_code", code: back.searchParams.get("code") as string, code_verifier: verifier, redirect_uri: uris[0] as string, client_id: clientId });
    expect(tokens.status).toBe(200);
  });

  it("VS Code: a loopback redirect without a path", async ({ server }) => {
    await server.agent("vscode-agent");
    const registered = await register(server.url, { client_name: "Visual Studio Code", redirect_uris: ["http://127.0.0.1:33418", "https://vscode.dev/redirect"], token_endpoint_auth_method: "none" });
    const clientId = registered.body.client_id as string;
    const { verifier, challenge } = pkce();
    const back = await consent(server.url, authorizeUrl(server.url, { client_id: clientId, redirect_uri: "http://127.0.0.1:33418", code_challenge: challenge }), await signIn(server.url), { agent: "vscode-agent" });
    const tokens = await tokenRequest(server.url, { grant_type: "authorization_code", code: back.searchParams.get("code") as string, code_verifier: verifier, redirect_uri: "http://127.0.0.1:33418", client_id: clientId });
    expect(tokens.status).toBe(200);
  });
});
