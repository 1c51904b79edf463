import { describe, expect } from "vitest";
import type { OAuthGrant as Grant } from "../../src/wire/oauth.js";
import { it } from "../helpers/fixtures.js";
import { eventsOf } from "../helpers/memory.js";
import { granted, OWNER_PASSWORD, tokenRequest } from "../helpers/oauth.js";

// The grants humans made (CONTRACT §19): listed and revoked by the owner, each one an event.

const REDIRECT = "http://127.0.0.1:55001/callback";


describe("OAuth grants", () => {
  it.override("serverEnv", { UI_PASSWORD: OWNER_PASSWORD });

  it("lists the grants to the owner, a page at a time, without a token or a code; refuses other roles", async ({ server }) => {
    const worker = await server.agent("grant-worker");
    const first = await granted(server.url, { agent: "grant-worker", name: "First host", redirect: REDIRECT });
    const second = await granted(server.url, { agent: "grant-worker", name: "Second host", write: false, redirect: REDIRECT });
    const page = await server.request<Grant[]>("/oauth/grants?limit=1", { as: server.owner });
    expect(page.status).toBe(200);
    expect(page.body).toHaveLength(1);
    const next = page.headers.get("x-next-cursor") as string;
    const rest = await server.request<Grant[]>(`/oauth/grants?limit=1&cursor=${encodeURIComponent(next)}`, { as: server.owner });
    const grants = [...page.body, ...rest.body];
    expect(grants.map((grant) => grant.client_id)).toEqual([first.clientId, second.clientId]);
    expect(grants[0]).toMatchObject({ client_name: "First host", client_host: "127.0.0.1:55001", agent_id: "grant-worker", scopes: ["cairn:read", "cairn:write"], resource: `${server.url}/mcp`, created_by: server.owner.agentId });
    expect(grants[0]?.last_used_at).not.toBeNull();
    expect(grants[1]?.scopes).toEqual(["cairn:read"]);
    for (const secret of [first.access, first.refresh, second.access, second.refresh]) expect(page.text + rest.text).not.toContain(secret);
    expect((await server.request("/oauth/grants", { as: worker })).status).toBe(403);
    expect((await server.request("/oauth/grants")).status).toBe(401);
  });

  it("revokes a grant with every token of it, as an event for the owners; a second revocation is 404", async ({ server }) => {
    await server.agent("grant-revoked");
    const kept = await granted(server.url, { agent: "grant-revoked", name: "Kept host", redirect: REDIRECT });
    const gone = await granted(server.url, { agent: "grant-revoked", name: "Gone host", redirect: REDIRECT });
    const grants = (await server.request<Grant[]>("/oauth/grants", { as: server.owner })).body;
    const target = grants.find((grant) => grant.client_id === gone.clientId) as Grant;
    expect((await server.request(`/oauth/grants/${target.id}`, { as: server.owner, method: "DELETE" })).status).toBe(204);
    expect((await fetch(`${server.url}/agents/me`, { headers: { authorization: `Bearer ${gone.access}` } })).status).toBe(401);
    expect((await tokenRequest(server.url, { grant_type: "refresh_token", refresh_token: gone.refresh, client_id: gone.clientId })).body.error).toBe("invalid_grant");
    expect((await fetch(`${server.url}/agents/me`, { headers: { authorization: `Bearer ${kept.access}` } })).status).toBe(200);
    expect((await server.request(`/oauth/grants/${target.id}`, { as: server.owner, method: "DELETE" })).status).toBe(404);
    const created = await eventsOf(server, "oauth.grant.created");
    const keptGrant = grants.find((grant) => grant.client_id === kept.clientId) as Grant;
    expect(created.map((event) => event.payload)).toEqual([
      { grant_id: keptGrant.id, client_id: kept.clientId, agent_id: "grant-revoked", scopes: ["cairn:read", "cairn:write"] },
      { grant_id: target.id, client_id: gone.clientId, agent_id: "grant-revoked", scopes: ["cairn:read", "cairn:write"] },
    ]);
    const revoked = await eventsOf(server, "oauth.grant.revoked");
    expect(revoked.map((event) => event.payload)).toEqual([{ grant_id: target.id, client_id: gone.clientId, agent_id: "grant-revoked", reason: "owner" }]);
    expect(revoked[0]?.agent_id).toBe(server.owner.agentId);
  });
});
