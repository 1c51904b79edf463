import { readFileSync, rmSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { cliEnv, startServe } from "../helpers/cli.js";
import { databaseText } from "../helpers/database.js";
import { authorizeUrl, consent, OWNER_PASSWORD, pkce, register, signIn, tokenRequest } from "../helpers/oauth.js";
import { request, tempDir, type Credentials } from "../helpers/server.js";

// No code, token, secret or verifier of the OAuth flow in a log line, an event, an error or a
// database column (CONTRACT §1.1, §11, §19): a real `cairn serve` logging everything is run through
// the whole flow, failures included, and everything it kept is searched.

const REDIRECT = "https://app.example/oauth/callback";

describe("OAuth secrets", () => {
  it("never puts a code, token, client secret or verifier in a log line, an event, an error or a database column", async () => {
    const dataDir = tempDir();
    const serve = await startServe(cliEnv(dataDir, { HOME: tempDir(), UI_PASSWORD: OWNER_PASSWORD, LOG_LEVEL: "debug" }));
    const errors: string[] = [];
    const secrets: string[] = [];
    try {
      const base = serve.url;
      await request(base, "/agents/self-register", { body: { agent_id: "secret-keeper" } });
      const client = await register(base, { client_name: "Confidential", redirect_uris: [REDIRECT], token_endpoint_auth_method: "client_secret_post" });
      const clientId = client.body.client_id as string;
      const clientSecret = client.body.client_secret as string;
      const session = await signIn(base);
      const { verifier, challenge } = pkce();
      const back = await consent(base, authorizeUrl(base, { client_id: clientId, redirect_uri: REDIRECT, code_challenge: challenge, state: "st" }), session, { agent: "secret-keeper" });
      const code = back.searchParams.get("code") as string;
      const form = { grant_type: "authorization_code", code, redirect_uri: REDIRECT, client_id: clientId };
      const failures = [
        await tokenRequest(base, { ...form, code_verifier: verifier, client_secret: `${clientSecret}x` }),
        await tokenRequest(base, { ...form, code_verifier: pkce().verifier, client_secret: clientSecret }),
      ];
      const tokens = await tokenRequest(base, { ...form, code_verifier: verifier, client_secret: clientSecret });
      expect(tokens.status).toBe(200);
      const access = tokens.body.access_token as string;
      const refreshToken = tokens.body.refresh_token as string;
      const refreshed = await tokenRequest(base, { grant_type: "refresh_token", refresh_token: refreshToken, client_id: clientId, client_secret: clientSecret });
      expect(refreshed.status).toBe(200);
      failures.push(
        await tokenRequest(base, { grant_type: "refresh_token", refresh_token: refreshToken, client_id: clientId, client_secret: clientSecret }),
        await tokenRequest(base, { ...form, code_verifier: verifier, client_secret: clientSecret }),
        await tokenRequest(base, { token: refreshed.body.refresh_token as string, client_id: clientId, client_secret: clientSecret }, "/oauth/revoke"),
      );
      errors.push(...failures.map((failure) => JSON.stringify(failure.body)));
      errors.push((await request(base, "/agents/me", { headers: { authorization: `Bearer ${access}` } })).text);
      errors.push((await request(base, `/mcp`, { method: "POST", headers: { authorization: `Bearer ${access}`, accept: "application/json, text/event-stream" }, body: {} })).text);
      secrets.push(code, verifier, clientSecret, access, refreshToken, refreshed.body.access_token as string, refreshed.body.refresh_token as string, session);
      const credentials = JSON.parse(readFileSync(join(dataDir, "credentials.json"), "utf8")) as { agents: Record<string, { agent_id: string; api_key: string }> };
      const human = credentials.agents.human as { agent_id: string; api_key: string };
      const owner: Credentials = { agentId: human.agent_id, apiKey: human.api_key };
      const events = await request(base, "/events?since=seq:0&limit=500", { as: owner });
      expect(events.status).toBe(200);
      expect(events.text).toContain("oauth.grant.revoked");
      const places: [string, string[]][] = [
        ["errors", errors],
        ["events", [events.text]],
        ["database", await databaseText(dataDir)],
      ];
      const run = await serve.stop();
      places.push(["logs", [run.stdout, run.stderr]]);
      expect(run.stderr).toContain('"msg":"request"');
      for (const [place, texts] of places) {
        for (const secret of secrets) {
          const bare = secret.replace(/^cairn_[a-z]+_/, "");
          expect(texts.some((text) => text.includes(secret) || text.includes(bare)), `${place} hold a secret`).toBe(false);
        }
      }
    } finally {
      await serve.stop();
      rmSync(dataDir, { recursive: true, force: true });
    }
  });
});
