import { rmSync } from "node:fs";
import { describe, expect } from "vitest";
import { withDatabase } from "../helpers/database.js";
import { it } from "../helpers/fixtures.js";
import { eventsOf } from "../helpers/memory.js";
import { authorizeUrl, consent, OWNER_PASSWORD, pkce, register, signIn, tokenRequest } from "../helpers/oauth.js";
import { startTestServer, tempDir, type TestServer } from "../helpers/server.js";

// What the token endpoint refuses, and what a refusal revokes (CONTRACT §19): the verifier, the
// redirect URI in each form, the resource, a reused code, and tokens whose agent or audience moved.

const REDIRECT = "http://127.0.0.1:52001/callback";

interface Issued {
  clientId: string;
  code: string;
  verifier: string;
}

/** A public client, allowed by the human to act as `agent`; the fresh code and its verifier. */
async function codeFor(server: TestServer, agent: string, redirect = REDIRECT, registered = [REDIRECT]): Promise<Issued> {
  const client = await register(server.url, { client_name: "refusals", redirect_uris: registered, token_endpoint_auth_method: "none" });
  const clientId = client.body.client_id as string;
  const { verifier, challenge } = pkce();
  const back = await consent(server.url, authorizeUrl(server.url, { client_id: clientId, redirect_uri: redirect, code_challenge: challenge }), await signIn(server.url), { agent });
  return { clientId, code: back.searchParams.get("code") as string, verifier };
}

const redeem = (server: TestServer, issued: Issued, extra: Record<string, string> = {}) =>
  tokenRequest(server.url, { grant_type: "authorization_code", code: issued.code, code_verifier: issued.verifier, redirect_uri: REDIRECT, client_id: issued.clientId, ...extra });

const status = async (server: TestServer, token: string): Promise<number> => (await fetch(`${server.url}/agents/me`, { headers: { authorization: `Bearer ${token}` } })).status;

describe("OAuth token endpoint refusals", () => {
  it.override("serverEnv", { UI_PASSWORD: OWNER_PASSWORD });

  it("refuses a wrong or missing verifier without using the code up: the right one still redeems it", async ({ server }) => {
    await server.agent("ref-verifier");
    const issued = await codeFor(server, "ref-verifier");
    const wrong = await redeem(server, issued, { code_verifier: pkce().verifier });
    expect(wrong).toMatchObject({ status: 400, body: { error: "invalid_grant" } });
    const missing = await tokenRequest(server.url, { grant_type: "authorization_code", code: issued.code, redirect_uri: REDIRECT, client_id: issued.clientId });
    expect(missing).toMatchObject({ status: 400, body: { error: "invalid_request" } });
    expect((await redeem(server, issued)).status).toBe(200);
  });

  it("refuses a redirect URI other than the authorization request's, in each form; loopback hosts are one", async ({ server }) => {
    await server.agent("ref-redirect");
    const issued = await codeFor(server, "ref-redirect");
    for (const redirect of ["http://127.0.0.1:52001/other", "https://127.0.0.1:52001/callback", "http://evil.example:52001/callback", "http://127.0.0.1:52001/callback?x=1"]) {
      expect(await redeem(server, issued, { redirect_uri: redirect }), redirect).toMatchObject({ status: 400, body: { error: "invalid_grant" } });
    }
    const omitted = await tokenRequest(server.url, { grant_type: "authorization_code", code: issued.code, code_verifier: issued.verifier, client_id: issued.clientId });
    expect(omitted.body.error).toBe("invalid_grant");
    expect((await redeem(server, issued, { redirect_uri: "http://localhost:52001/callback" })).status).toBe(200);
  });

  it("refuses another server's resource, another client's code and an expired code", async ({ server }) => {
    await server.agent("ref-other");
    const issued = await codeFor(server, "ref-other");
    expect(await redeem(server, issued, { resource: "https://other.example/mcp" })).toMatchObject({ status: 400, body: { error: "invalid_target" } });
    const other = await register(server.url, { redirect_uris: [REDIRECT], token_endpoint_auth_method: "none" });
    expect(await redeem(server, issued, { client_id: other.body.client_id as string })).toMatchObject({ status: 400, body: { error: "invalid_grant" } });
    await withDatabase(server.dataDir, (db) => db.run("UPDATE oauth_codes SET expires_at = ?", "2000-01-01T00:00:00.000Z"));
    expect(await redeem(server, issued)).toMatchObject({ status: 400, body: { error: "invalid_grant" } });
  });

  it("answers a reused code with invalid_grant and revokes every token issued from it", async ({ server }) => {
    await server.agent("ref-reuse");
    const issued = await codeFor(server, "ref-reuse");
    const first = await redeem(server, issued);
    expect(first.status).toBe(200);
    expect(await status(server, first.body.access_token as string)).toBe(200);
    const again = await redeem(server, issued);
    expect(again).toMatchObject({ status: 400, body: { error: "invalid_grant" } });
    expect(await status(server, first.body.access_token as string)).toBe(401);
    const refresh = await tokenRequest(server.url, { grant_type: "refresh_token", refresh_token: first.body.refresh_token as string, client_id: issued.clientId });
    expect(refresh.body.error).toBe("invalid_grant");
    const revoked = await eventsOf(server, "oauth.grant.revoked");
    expect(revoked.map((event) => event.payload)).toEqual([expect.objectContaining({ agent_id: "ref-reuse", client_id: issued.clientId, reason: "code_reused" })]);
  });

  it("refuses a token issued for another audience", async ({ server }) => {
    await server.agent("ref-audience");
    const tokens = await redeem(server, await codeFor(server, "ref-audience"));
    expect(await status(server, tokens.body.access_token as string)).toBe(200);
    // As if the token had been issued by a server elsewhere (another PUBLIC_URL) sharing this database.
    await withDatabase(server.dataDir, (db) => db.run("UPDATE oauth_tokens SET resource = ? WHERE grant_id IS NOT NULL", "https://elsewhere.example/mcp"));
    expect(await status(server, tokens.body.access_token as string)).toBe(401);
  });

  it("kills an agent's tokens when it is deleted, but not when its key is rotated (no token carries a key)", async ({ server }) => {
    const agent = await server.agent("ref-deleted");
    const tokens = await redeem(server, await codeFor(server, "ref-deleted"));
    const rotated = await server.request<{ api_key: string }>(`/agents/ref-deleted/rotate-key`, { as: agent, method: "POST" });
    expect(rotated.status).toBe(200);
    expect(await status(server, tokens.body.access_token as string)).toBe(200);
    expect((await server.request("/agents/ref-deleted", { as: server.owner, method: "DELETE" })).status).toBe(204);
    expect(await status(server, tokens.body.access_token as string)).toBe(401);
    const revoked = await eventsOf(server, "oauth.grant.revoked");
    expect(revoked.map((event) => event.payload.reason)).toEqual(["agent_deleted"]);
    // Only the owner role hears of grants.
    const bystander = await server.agent("ref-bystander");
    for (const type of ["oauth.grant.created", "oauth.grant.revoked"]) {
      const seen = await server.request<unknown[]>(`/events?since=seq:0&limit=500&type=${type}`, { as: bystander });
      expect(seen.status).toBe(200);
      expect(seen.body).toEqual([]);
      expect((await eventsOf(server, type)).length).toBe(1);
    }
  });
});

describe("OAuth tokens and role changes", () => {
  it("kills an agent's tokens when configuration changes its role", async () => {
    const dataDir = tempDir();
    const env = { DATA_DIR: dataDir, UI_PASSWORD: OWNER_PASSWORD };
    const before = await startTestServer({ ...env, AGENT_KEYS: "static-agent:static-agent-key-0123456789:agent" });
    let token: string;
    try {
      const tokens = await redeem(before, await codeFor(before, "static-agent"));
      token = tokens.body.access_token as string;
      expect(await status(before, token)).toBe(200);
    } finally {
      await before.close();
    }
    const after = await startTestServer({ ...env, AGENT_KEYS: "static-agent:static-agent-key-0123456789:viewer" });
    try {
      expect(await status(after, token)).toBe(401);
      const revoked = await eventsOf(after, "oauth.grant.revoked");
      expect(revoked.map((event) => event.payload.reason)).toEqual(["role_changed"]);
    } finally {
      await after.close();
      rmSync(dataDir, { recursive: true, force: true });
    }
  });
});
