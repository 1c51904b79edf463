import { rmSync } from "node:fs";
import { describe, expect } from "vitest";
import { onPostgres } from "../helpers/database.js";
import { it } from "../helpers/fixtures.js";
import { startGroup } from "../helpers/group.js";
import { eventsOf } from "../helpers/memory.js";
import { authorizeUrl, consent, OWNER_PASSWORD, pkce, register, signIn, tokenRequest } from "../helpers/oauth.js";
import type { TestServer } from "../helpers/server.js";

// Exactly once (CONTRACT §19, DESIGN §3.0): a code redeemed by many requests at once gives one token
// set, a refresh token rotated by many at once gives one, on either backend and across servers
// sharing one PostgreSQL database. The losers are reuse, and reuse revokes the grant.

const REDIRECT = "http://127.0.0.1:53001/callback";
const RACERS = 12;

async function codeOn(baseUrl: string, registerOn: string, agent: string): Promise<{ clientId: string; code: string; verifier: string }> {
  const client = await register(registerOn, { client_name: "racer", redirect_uris: [REDIRECT], token_endpoint_auth_method: "none" });
  const clientId = client.body.client_id as string;
  const { verifier, challenge } = pkce();
  const back = await consent(baseUrl, authorizeUrl(baseUrl, { client_id: clientId, redirect_uri: REDIRECT, code_challenge: challenge }), await signIn(baseUrl), { agent });
  return { clientId, code: back.searchParams.get("code") as string, verifier };
}

const sorted = (statuses: number[]): number[] => [...statuses].sort((a, b) => a - b);

describe("OAuth races", () => {
  it.override("serverEnv", { UI_PASSWORD: OWNER_PASSWORD });

  async function flowOn(server: TestServer, agent: string) {
    await server.agent(agent);
    return codeOn(server.url, server.url, agent);
  }

  it("redeems a code requested by many at once exactly once; the rest is reuse, which revokes what was issued", async ({ server }) => {
    const { clientId, code, verifier } = await flowOn(server, "race-code");
    const answers = await Promise.all(
      Array.from({ length: RACERS }, () => tokenRequest(server.url, { grant_type: "authorization_code", code, code_verifier: verifier, redirect_uri: REDIRECT, client_id: clientId })),
    );
    expect(sorted(answers.map((answer) => answer.status))).toEqual([200, ...Array<number>(RACERS - 1).fill(400)]);
    expect(answers.filter((answer) => answer.status === 400).every((answer) => answer.body.error === "invalid_grant")).toBe(true);
    const winner = answers.find((answer) => answer.status === 200)?.body.access_token as string;
    expect((await fetch(`${server.url}/agents/me`, { headers: { authorization: `Bearer ${winner}` } })).status).toBe(401);
    const revoked = await eventsOf(server, "oauth.grant.revoked");
    expect(revoked.map((event) => event.payload.reason)).toEqual(["code_reused"]);
  });

  it("rotates a refresh token used by many at once for one of them; the rest is reuse, which revokes the family", async ({ server }) => {
    const { clientId, code, verifier } = await flowOn(server, "race-refresh");
    const first = await tokenRequest(server.url, { grant_type: "authorization_code", code, code_verifier: verifier, redirect_uri: REDIRECT, client_id: clientId });
    expect(first.status).toBe(200);
    const refreshToken = first.body.refresh_token as string;
    const answers = await Promise.all(Array.from({ length: RACERS }, () => tokenRequest(server.url, { grant_type: "refresh_token", refresh_token: refreshToken, client_id: clientId })));
    expect(sorted(answers.map((answer) => answer.status))).toEqual([200, ...Array<number>(RACERS - 1).fill(400)]);
    const winner = answers.find((answer) => answer.status === 200)?.body as { access_token: string; refresh_token: string };
    for (const token of [first.body.access_token as string, winner.access_token]) {
      expect((await fetch(`${server.url}/agents/me`, { headers: { authorization: `Bearer ${token}` } })).status).toBe(401);
    }
    const next = await tokenRequest(server.url, { grant_type: "refresh_token", refresh_token: winner.refresh_token, client_id: clientId });
    expect(next.body.error).toBe("invalid_grant");
  });
});

describe("OAuth races across servers", () => {
  it.runIf(onPostgres)("redeems a code sent to three cairn serve processes on one PostgreSQL database exactly once", async () => {
    // Behind one load balancer all three are one PUBLIC_URL (nothing listens there: requests go to each process).
    const group = await startGroup(3, () => ({ UI_PASSWORD: OWNER_PASSWORD, PUBLIC_URL: "http://127.0.0.1:9" }));
    try {
      const urls = group.servers.map((server) => server.url);
      await group.agent("race-group");
      const { clientId, code, verifier } = await codeOn(urls[1] as string, urls[0] as string, "race-group");
      const answers = await Promise.all(
        Array.from({ length: RACERS }, (_, index) =>
          tokenRequest(urls[index % urls.length] as string, { grant_type: "authorization_code", code, code_verifier: verifier, redirect_uri: REDIRECT, client_id: clientId }),
        ),
      );
      expect(sorted(answers.map((answer) => answer.status))).toEqual([200, ...Array<number>(RACERS - 1).fill(400)]);
      const winner = answers.find((answer) => answer.status === 200)?.body.access_token as string;
      for (const url of urls) expect((await fetch(`${url}/agents/me`, { headers: { authorization: `Bearer ${winner}` } })).status).toBe(401);
    } finally {
      await group.stop();
      rmSync(group.dataDir, { recursive: true, force: true });
    }
  });
});
