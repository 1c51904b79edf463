import { describe, expect } from "vitest";
import { it } from "../helpers/fixtures.js";
import { authorizeUrl, consent, decide, openAuthorize, OWNER_PASSWORD, offeredAgents, pkce, register, signIn, tokenRequest } from "../helpers/oauth.js";
import type { TestServer } from "../helpers/server.js";

// The authorization endpoint and the consent page (CONTRACT §19): what is checked first and shown
// as a page, what goes back to the client, who may consent and as whom the client may act.

const REDIRECT = "http://127.0.0.1:47123/callback";

async function publicClient(server: TestServer, redirectUris = [REDIRECT]): Promise<string> {
  const registered = await register(server.url, { client_name: "Test <Host>", redirect_uris: redirectUris, token_endpoint_auth_method: "none" });
  expect(registered.status).toBe(201);
  return registered.body.client_id as string;
}

describe("OAuth authorization endpoint", () => {
  it.override("serverEnv", { UI_PASSWORD: OWNER_PASSWORD, AGENT_KEYS: "viewer-one:viewer-one-key-0123456789:viewer" });

  it("shows a page, never a redirect, for an unknown client or a redirect URI not registered (in any form)", async ({ server }) => {
    const clientId = await publicClient(server);
    const { challenge } = pkce();
    const cases = [
      { client_id: "00000000-0000-4000-8000-000000000000", redirect_uri: REDIRECT },
      { client_id: clientId, redirect_uri: "http://127.0.0.1:47123/other" },
      { client_id: clientId, redirect_uri: "http://127.0.0.1:47123/callback?x=1" },
      { client_id: clientId, redirect_uri: "https://127.0.0.1:47123/callback" },
      { client_id: clientId, redirect_uri: "http://evil.example/callback" },
      { client_id: clientId, redirect_uri: `${REDIRECT}#fragment` },
    ];
    for (const params of cases) {
      const page = await openAuthorize(authorizeUrl(server.url, { ...params, code_challenge: challenge, state: "s" }));
      expect(page.status, params.redirect_uri).toBe(400);
      expect(page.location).toBeNull();
      expect(page.headers.get("content-type")).toContain("text/html");
    }
  });

  it("takes a loopback redirect on any of localhost, 127.0.0.1 and [::1], on any port (Claude Code registers 127.0.0.1, then uses localhost)", async ({ server }) => {
    const clientId = await publicClient(server, ["http://127.0.0.1:50001/callback"]);
    for (const redirect of ["http://localhost:50002/callback", "http://[::1]:50003/callback", "http://127.0.0.1/callback"]) {
      const page = await openAuthorize(authorizeUrl(server.url, { client_id: clientId, redirect_uri: redirect, code_challenge: pkce().challenge }));
      expect(page.status, redirect).toBe(200);
    }
  });

  it("sends the rest back to the client with error, state and iss: no PKCE, plain, another response type, another server's resource", async ({ server }) => {
    const clientId = await publicClient(server);
    const { challenge } = pkce();
    const base = { client_id: clientId, redirect_uri: REDIRECT, state: "st-1" };
    const cases: [Record<string, string>, string][] = [
      [{ ...base }, "invalid_request"],
      [{ ...base, code_challenge: challenge, code_challenge_method: "plain" }, "invalid_request"],
      [{ ...base, code_challenge: "too-short" }, "invalid_request"],
      [{ ...base, code_challenge: challenge, response_type: "token" }, "unsupported_response_type"],
      [{ ...base, code_challenge: challenge, resource: "https://other.example/mcp" }, "invalid_target"],
      [{ ...base, code_challenge: challenge, resource: `${server.url}/other` }, "invalid_target"],
    ];
    for (const [params, error] of cases) {
      const url = new URL(`${server.url}/oauth/authorize`);
      for (const [name, value] of Object.entries({ response_type: "code", code_challenge_method: "S256", ...params })) url.searchParams.set(name, value);
      if (params.code_challenge === undefined) url.searchParams.delete("code_challenge_method");
      const page = await openAuthorize(url.href);
      expect(page.status, JSON.stringify(params)).toBe(302);
      const location = new URL(page.location as string);
      expect(`${location.origin}${location.pathname}`).toBe(REDIRECT);
      expect(Object.fromEntries(location.searchParams)).toMatchObject({ error, state: "st-1", iss: server.url });
    }
    // This server's own resource, as the metadata names it or as its base URL, is fine.
    for (const resource of [`${server.url}/mcp`, server.url, `${server.url}/`]) {
      expect((await openAuthorize(authorizeUrl(server.url, { ...base, code_challenge: challenge, resource }))).status, resource).toBe(200);
    }
  });

  it("asks the human to sign in first, and signs in with the UI password on the page itself", async ({ server }) => {
    const clientId = await publicClient(server);
    const url = authorizeUrl(server.url, { client_id: clientId, redirect_uri: REDIRECT, code_challenge: pkce().challenge, state: "x" });
    const page = await openAuthorize(url);
    expect(page.status).toBe(200);
    expect(page.html).toContain('name="password"');
    expect(page.html).not.toContain('name="csrf"');
    const signedIn = await fetch(`${server.url}/oauth/authorize`, {
      method: "POST",
      redirect: "manual",
      headers: { "content-type": "application/x-www-form-urlencoded", origin: server.url },
      body: new URLSearchParams([...new URL(url).searchParams, ["action", "sign-in"], ["password", OWNER_PASSWORD]]).toString(),
    });
    expect(signedIn.status).toBe(303);
    const cookie = /cairn_ui_session=([^;]+)/.exec(signedIn.headers.get("set-cookie") ?? "")?.[1];
    expect(cookie).toBeDefined();
    const consentPage = await openAuthorize(`${server.url}${signedIn.headers.get("location") ?? ""}`, decodeURIComponent(cookie as string));
    expect(consentPage.html).toContain('name="csrf"');
    const wrong = await fetch(`${server.url}/oauth/authorize`, {
      method: "POST",
      headers: { "content-type": "application/x-www-form-urlencoded", origin: server.url },
      body: new URLSearchParams([...new URL(url).searchParams, ["action", "sign-in"], ["password", "wrong"]]).toString(),
    });
    expect(wrong.status).toBe(401);
  });

  it("shows the client's name (escaped), its redirect host and the scopes; offers agents and viewers, never the owner or the archivist", async ({ server }) => {
    await server.agent("worker-1");
    const clientId = await publicClient(server);
    const session = await signIn(server.url);
    const page = await openAuthorize(authorizeUrl(server.url, { client_id: clientId, redirect_uri: REDIRECT, code_challenge: pkce().challenge }), session);
    expect(page.status).toBe(200);
    expect(page.html).toContain("Test &lt;Host&gt;");
    expect(page.html).not.toContain("Test <Host>");
    expect(page.html).toContain("127.0.0.1:47123");
    expect(page.html).toContain("cairn:read");
    expect(page.html).toContain("cairn:write");
    const offered = offeredAgents(page.html);
    expect(offered).toContain("worker-1");
    expect(offered).toContain("viewer-one");
    expect(offered).toContain("__new__");
    expect(offered).not.toContain(server.owner.agentId);
    expect(offered).not.toContain(server.archivist.agentId);
    expect(page.headers.get("content-security-policy")).toContain("frame-ancestors 'none'");
    expect(page.headers.get("x-frame-options")).toBe("DENY");
    expect(page.headers.get("cache-control")).toBe("no-store");
    // Named in the form anyway, they are refused.
    for (const agent of [server.owner.agentId, server.archivist.agentId]) {
      const refused = await decide(server.url, page, session, { decision: "allow", agent });
      expect(refused.status).toBe(400);
      expect(refused.location).toBeNull();
    }
    const newOwner = await decide(server.url, page, session, { decision: "allow", agent: { create: server.owner.agentId } });
    expect(newOwner.status).toBe(400);
  });

  it("refuses a decision without a session, without or with a wrong CSRF token, or from another site", async ({ server }) => {
    const clientId = await publicClient(server);
    const session = await signIn(server.url);
    await server.agent("worker-2");
    const page = await openAuthorize(authorizeUrl(server.url, { client_id: clientId, redirect_uri: REDIRECT, code_challenge: pkce().challenge }), session);
    expect((await decide(server.url, page, undefined, { decision: "allow", agent: "worker-2" })).status).toBe(401);
    expect((await decide(server.url, page, session, { decision: "allow", agent: "worker-2", tamper: (fields) => fields.filter(([name]) => name !== "csrf") })).status).toBe(403);
    const otherSession = await signIn(server.url);
    expect((await decide(server.url, page, otherSession, { decision: "allow", agent: "worker-2" })).status).toBe(403);
    // The token fits this request only: the same form with another state is refused.
    const moved = (fields: [string, string][]): [string, string][] => [...fields.filter(([name]) => name !== "code_challenge"), ["code_challenge", pkce().challenge]];
    expect((await decide(server.url, page, session, { decision: "allow", agent: "worker-2", tamper: moved })).status).toBe(403);
    expect((await decide(server.url, page, session, { decision: "allow", agent: "worker-2", origin: "http://evil.example" })).status).toBe(403);
    // All of it right: a code.
    expect((await decide(server.url, page, session, { decision: "allow", agent: "worker-2" })).status).toBe(302);
  });

  it("denies with access_denied, state and iss", async ({ server }) => {
    const clientId = await publicClient(server);
    const session = await signIn(server.url);
    const page = await openAuthorize(authorizeUrl(server.url, { client_id: clientId, redirect_uri: REDIRECT, code_challenge: pkce().challenge, state: "deny-me" }), session);
    const denied = await decide(server.url, page, session, { decision: "deny" });
    expect(denied.status).toBe(302);
    expect(Object.fromEntries(new URL(denied.location as string).searchParams)).toMatchObject({ error: "access_denied", state: "deny-me", iss: server.url });
  });

  it("allows with a code, state and iss, acting as a new agent created on consent; unticking write grants cairn:read alone", async ({ server }) => {
    const clientId = await publicClient(server);
    const session = await signIn(server.url);
    const { verifier, challenge } = pkce();
    const location = await consent(server.url, authorizeUrl(server.url, { client_id: clientId, redirect_uri: REDIRECT, code_challenge: challenge, state: "ok" }), session, { agent: { create: "made-on-consent" }, write: false });
    expect(Object.fromEntries(location.searchParams)).toMatchObject({ state: "ok", iss: server.url });
    const code = location.searchParams.get("code") as string;
    expect(code).toMatch(/^cairn_ac_/);
    const tokens = await tokenRequest(server.url, { grant_type: "authorization_code", code, code_verifier: verifier, redirect_uri: REDIRECT, client_id: clientId });
    expect(tokens.status).toBe(200);
    expect(tokens.body).toMatchObject({ token_type: "bearer", expires_in: 3600, scope: "cairn:read" });
    const me = await fetch(`${server.url}/agents/me`, { headers: { authorization: `Bearer ${tokens.body.access_token as string}` } });
    expect(((await me.json()) as { agent_id: string }).agent_id).toBe("made-on-consent");
    // cairn:read alone acts with a viewer's rights: a write is 403 with an insufficient_scope challenge.
    const write = await fetch(`${server.url}/memory`, {
      method: "POST",
      headers: { authorization: `Bearer ${tokens.body.access_token as string}`, "content-type": "application/json" },
      body: JSON.stringify({ content: "may I?", project: null }),
    });
    expect(write.status).toBe(403);
    const challenge403 = write.headers.get("www-authenticate") ?? "";
    expect(challenge403.startsWith("Bearer ")).toBe(true);
    expect(challenge403).toContain('error="insufficient_scope"');
    expect(challenge403).toContain('scope="cairn:read cairn:write"');
    expect(challenge403).toContain(`resource_metadata="${server.url}/.well-known/oauth-protected-resource"`);
    const agents = await server.request<{ agent_id: string; role: string }[]>("/agents", { as: server.owner });
    expect(agents.body.find((agent) => agent.agent_id === "made-on-consent")?.role).toBe("agent");
  });
});
