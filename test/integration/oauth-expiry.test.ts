import { describe, expect } from "vitest";
import type { OAuthGrant as Grant } from "../../src/wire/oauth.js";
import { withDatabase } from "../helpers/database.js";
import { it } from "../helpers/fixtures.js";
import { eventsOf } from "../helpers/memory.js";
import { authorizeUrl, consent, openAuthorize, OWNER_PASSWORD, pkce, register, signIn, tokenRequest } from "../helpers/oauth.js";
import type { TestServer } from "../helpers/server.js";
import { eventually } from "../helpers/wait.js";

// Unused clients expire and grants nothing can use are pruned (CONTRACT §19). Time is moved the
// honest way: the rows' timestamps are set back in the server's own database, and the server's own
// checks and hourly job (run every 100 ms here) judge them.

const REDIRECT = "http://127.0.0.1:57001/callback";
const HOUR = 3600_000;
const DAY = 24 * HOUR;

const ago = (ms: number): string => new Date(Date.now() - ms).toISOString();

async function newClient(server: TestServer, name: string): Promise<string> {
  const registered = await register(server.url, { client_name: name, redirect_uris: [REDIRECT], token_endpoint_auth_method: "none" });
  expect(registered.status).toBe(201);
  return registered.body.client_id as string;
}

/** The human allows the client as `agent`; the code that comes back, with its verifier. */
async function allowed(server: TestServer, clientId: string, agent: string): Promise<{ code: string; verifier: string }> {
  const { verifier, challenge } = pkce();
  const back = await consent(server.url, authorizeUrl(server.url, { client_id: clientId, redirect_uri: REDIRECT, code_challenge: challenge }), await signIn(server.url), { agent });
  return { code: back.searchParams.get("code") as string, verifier };
}

/** A client allowed as `agent` with its code redeemed: its id and refresh token. */
async function holding(server: TestServer, name: string, agent: string): Promise<{ clientId: string; refresh: string }> {
  const clientId = await newClient(server, name);
  const { code, verifier } = await allowed(server, clientId, agent);
  const tokens = await tokenRequest(server.url, { grant_type: "authorization_code", code, code_verifier: verifier, redirect_uri: REDIRECT, client_id: clientId });
  expect(tokens.status).toBe(200);
  return { clientId, refresh: tokens.body.refresh_token as string };
}

/** The status of the authorization endpoint for the client, as a browser that is not signed in sees it. */
const authorizeStatus = async (server: TestServer, clientId: string): Promise<number> =>
  (await openAuthorize(authorizeUrl(server.url, { client_id: clientId, redirect_uri: REDIRECT, code_challenge: pkce().challenge }))).status;

/** A code request with a code nobody issued: `invalid_grant` for a known client, `invalid_client` for an unknown one. */
const redeemUnknownCode = (server: TestServer, clientId: string) =>
  tokenRequest(server.url, { grant_type: "authorization_code", code: "cairn_ac_nobody-issued-this", code_verifier: pkce().verifier, redirect_uri: REDIRECT, client_id: clientId });

const refresh = (server: TestServer, clientId: string, token: string) => tokenRequest(server.url, { grant_type: "refresh_token", refresh_token: token, client_id: clientId });

const grantsOf = async (server: TestServer): Promise<Grant[]> => (await server.request<Grant[]>("/oauth/grants?limit=100", { as: server.owner })).body;

const clientRows = (server: TestServer, ids: string[]): Promise<string[]> =>
  withDatabase(server.dataDir, async (db) => {
    const rows = await db.all<{ client_id: string }>("SELECT client_id FROM oauth_clients");
    return rows.map((row) => row.client_id).filter((id) => ids.includes(id));
  });

describe("OAuth client expiry, as each request finds it", () => {
  it.override("serverEnv", { UI_PASSWORD: OWNER_PASSWORD });

  it("takes a client never used until a day after it registered, then shows the error page at /oauth/authorize and answers invalid_client (401) at /oauth/token", async ({ server }) => {
    const clientId = await newClient(server, "Never used");
    await withDatabase(server.dataDir, (db) => db.run("UPDATE oauth_clients SET created_at = ? WHERE client_id = ?", ago(DAY - HOUR), clientId));
    expect(await authorizeStatus(server, clientId)).toBe(200);
    expect(await redeemUnknownCode(server, clientId)).toMatchObject({ status: 400, body: { error: "invalid_grant" } });

    await withDatabase(server.dataDir, (db) => db.run("UPDATE oauth_clients SET created_at = ? WHERE client_id = ?", ago(DAY + HOUR), clientId));
    const page = await openAuthorize(authorizeUrl(server.url, { client_id: clientId, redirect_uri: REDIRECT, code_challenge: pkce().challenge }));
    expect(page.status).toBe(400);
    expect(page.location).toBeNull();
    expect(page.html).toContain("unknown or expired client");
    expect(await redeemUnknownCode(server, clientId)).toMatchObject({ status: 401, body: { error: "invalid_client" } });
  });

  it("never expires a client holding a live refresh token, however long ago it registered and was last used: it refreshes", async ({ server }) => {
    await server.agent("expiry-holder");
    const holder = await holding(server, "Holder", "expiry-holder");
    await withDatabase(server.dataDir, (db) => db.run("UPDATE oauth_clients SET created_at = ?, last_used_at = ? WHERE client_id = ?", ago(60 * DAY), ago(40 * DAY), holder.clientId));
    expect(await authorizeStatus(server, holder.clientId)).toBe(200);
    expect((await refresh(server, holder.clientId, holder.refresh)).status).toBe(200);
  });

  it("counts a token request as a use: a client that refreshed lives 30 days from then, even with no token left", async ({ server }) => {
    await server.agent("expiry-refresher");
    const refresher = await holding(server, "Refresher", "expiry-refresher");
    // Allowed long ago, it refreshes now.
    await withDatabase(server.dataDir, (db) => db.run("UPDATE oauth_clients SET created_at = ?, last_used_at = ? WHERE client_id = ?", ago(40 * DAY), ago(40 * DAY), refresher.clientId));
    expect((await refresh(server, refresher.clientId, refresher.refresh)).status).toBe(200);
    // The owner revokes its grant: no live refresh token keeps it now, only its use a moment ago.
    const [grant] = (await grantsOf(server)).filter((row) => row.client_id === refresher.clientId);
    expect((await server.request(`/oauth/grants/${grant?.id ?? "none"}`, { method: "DELETE", as: server.owner })).status).toBe(204);
    expect(await authorizeStatus(server, refresher.clientId)).toBe(200);
    // 30 days after that use, it is gone.
    await withDatabase(server.dataDir, (db) => db.run("UPDATE oauth_clients SET last_used_at = ? WHERE client_id = ?", ago(30 * DAY + HOUR), refresher.clientId));
    expect(await authorizeStatus(server, refresher.clientId)).toBe(400);
  });
});

describe("the hourly job's pruning of OAuth clients and grants", () => {
  it.override("serverEnv", { UI_PASSWORD: OWNER_PASSWORD });
  it.override("serverOptions", { pruneIntervalMs: 100 });

  it("deletes expired clients, revokes each grant nothing can use with an oauth.grant.revoked event (reason expired), and keeps a live grant and its client", async ({ server }) => {
    await server.agent("pruned-agent");
    const live = await holding(server, "Live host", "pruned-agent");
    const lapsed = await holding(server, "Lapsed host", "pruned-agent");
    const unredeemedClient = await newClient(server, "Unredeemed host");
    await allowed(server, unredeemedClient, "pruned-agent");
    const neverUsed = await newClient(server, "Never used host");
    const grants = await grantsOf(server);
    const grantOf = (clientId: string): string => grants.find((grant) => grant.client_id === clientId)?.id ?? "none";

    await withDatabase(server.dataDir, async (db) => {
      // First the live client, past both lifetimes: a run of the job that sees any change below sees this one too.
      await db.run("UPDATE oauth_clients SET created_at = ?, last_used_at = ? WHERE client_id = ?", ago(60 * DAY), ago(40 * DAY), live.clientId);
      await db.run("UPDATE oauth_clients SET created_at = ? WHERE client_id = ?", ago(DAY + HOUR), neverUsed);
      // Allowed long ago, its refresh tokens expired, its client unused for 30 days.
      await db.run("UPDATE oauth_grants SET created_at = ? WHERE id = ?", ago(60 * DAY), grantOf(lapsed.clientId));
      await db.run("UPDATE oauth_refresh_tokens SET expires_at = ? WHERE grant_id = ?", ago(HOUR), grantOf(lapsed.clientId));
      await db.run("UPDATE oauth_clients SET created_at = ?, last_used_at = ? WHERE client_id = ?", ago(60 * DAY), ago(31 * DAY), lapsed.clientId);
      // Its code expired unredeemed.
      await db.run("UPDATE oauth_grants SET created_at = ? WHERE id = ?", ago(5 * 60_000), grantOf(unredeemedClient));
      await db.run("UPDATE oauth_codes SET created_at = ?, expires_at = ? WHERE grant_id = ?", ago(5 * 60_000), ago(4 * 60_000), grantOf(unredeemedClient));
    });

    const pruned = async (): Promise<boolean> => {
      const left = (await grantsOf(server)).map((grant) => grant.id);
      return !left.includes(grantOf(lapsed.clientId)) && !left.includes(grantOf(unredeemedClient)) && (await clientRows(server, [neverUsed, lapsed.clientId])).length === 0;
    };
    expect(await eventually(pruned)).toBe(true);

    const revoked = (await eventsOf(server, "oauth.grant.revoked")).map((event) => ({ agent: event.agent_id, ...event.payload }));
    expect(revoked).toHaveLength(2);
    expect(revoked).toEqual(
      expect.arrayContaining([
        { agent: server.owner.agentId, grant_id: grantOf(lapsed.clientId), client_id: lapsed.clientId, agent_id: "pruned-agent", reason: "expired" },
        { agent: server.owner.agentId, grant_id: grantOf(unredeemedClient), client_id: unredeemedClient, agent_id: "pruned-agent", reason: "expired" },
      ]),
    );
    // The live grant and its client stay, and the client refreshes.
    expect((await grantsOf(server)).map((grant) => grant.id)).toContain(grantOf(live.clientId));
    expect(await clientRows(server, [live.clientId])).toEqual([live.clientId]);
    expect((await refresh(server, live.clientId, live.refresh)).status).toBe(200);
    // The pruned clients are unknown: the error page, and invalid_client so that SDKs register again.
    for (const clientId of [neverUsed, lapsed.clientId]) {
      expect(await authorizeStatus(server, clientId)).toBe(400);
      expect(await redeemUnknownCode(server, clientId)).toMatchObject({ status: 401, body: { error: "invalid_client" } });
    }
  });
});
