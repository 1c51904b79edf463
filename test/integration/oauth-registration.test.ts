import { createHash } from "node:crypto";
import { describe, expect } from "vitest";
import { withDatabase } from "../helpers/database.js";
import { it } from "../helpers/fixtures.js";
import { authorizeUrl, consent, openAuthorize, OWNER_PASSWORD, pkce, register, signIn, tokenRequest } from "../helpers/oauth.js";

// Discovery and dynamic client registration (CONTRACT §19): the metadata documents, the challenges
// that point at them, and registrations shaped as real hosts send them.

describe("OAuth metadata and challenges", () => {
  it("serves the protected-resource document at the root and path-inserted well-known, resource byte-equal to <PUBLIC_URL>/mcp", async ({ server }) => {
    for (const path of ["/.well-known/oauth-protected-resource", "/.well-known/oauth-protected-resource/mcp"]) {
      const response = await fetch(`${server.url}${path}`);
      expect(response.status).toBe(200);
      const text = await response.text();
      expect(JSON.parse(text)).toEqual({
        resource: `${server.url}/mcp`,
        authorization_servers: [server.url],
        scopes_supported: ["cairn:read", "cairn:write"],
        bearer_methods_supported: ["header"],
        resource_name: "Cairn",
        resource_documentation: `${server.url}/docs`,
      });
      expect(text).toContain(`"resource":"${server.url}/mcp"`);
    }
  });

  it("describes the authorization server with every field the contract lists", async ({ server }) => {
    const metadata = (await (await fetch(`${server.url}/.well-known/oauth-authorization-server`)).json()) as Record<string, unknown>;
    expect(metadata).toMatchObject({
      issuer: server.url,
      authorization_endpoint: `${server.url}/oauth/authorize`,
      token_endpoint: `${server.url}/oauth/token`,
      registration_endpoint: `${server.url}/oauth/register`,
      revocation_endpoint: `${server.url}/oauth/revoke`,
      response_types_supported: ["code"],
      grant_types_supported: ["authorization_code", "refresh_token", "client_credentials"],
      code_challenge_methods_supported: ["S256"],
      token_endpoint_auth_methods_supported: ["none", "client_secret_basic", "client_secret_post"],
      authorization_response_iss_parameter_supported: true,
      client_id_metadata_document_supported: true,
      scopes_supported: ["cairn:read", "cairn:write"],
    });
  });

  it("puts the Bearer challenge first, with resource_metadata and both scopes, on every 401 (REST and /mcp)", async ({ server }) => {
    const expected = `Bearer resource_metadata="${server.url}/.well-known/oauth-protected-resource", scope="cairn:read cairn:write"`;
    const rest = await fetch(`${server.url}/memory`);
    expect(rest.status).toBe(401);
    expect(rest.headers.get("www-authenticate")?.startsWith(expected)).toBe(true);
    expect(rest.headers.get("www-authenticate")).toContain('ApiKey realm="cairn"');
    const mcp = await fetch(`${server.url}/mcp`, {
      method: "POST",
      headers: { "content-type": "application/json", accept: "application/json, text/event-stream", authorization: "Bearer cairn_at_unknown" },
      body: JSON.stringify({ jsonrpc: "2.0", id: 1, method: "initialize", params: { protocolVersion: "2025-06-18", capabilities: {}, clientInfo: { name: "x", version: "1" } } }),
    });
    expect(mcp.status).toBe(401);
    expect(mcp.headers.get("www-authenticate")?.startsWith(expected)).toBe(true);
  });
});

describe("OAuth dynamic client registration", () => {
  it("registers Cursor's shape: three redirect URIs with a reverse-DNS private-use scheme and application_type web", async ({ server }) => {
    const uris = ["cursor://anysphere.cursor-mcp/oauth/callback", "http://localhost:36789/callback", "http://127.0.0.1:36789/callback"];
    const registered = await register(server.url, {
      client_name: "Cursor",
      redirect_uris: uris,
      grant_types: ["authorization_code", "refresh_token"],
      response_types: ["code"],
      token_endpoint_auth_method: "none",
      application_type: "web",
    });
    expect(registered.status).toBe(201);
    expect(registered.body).toMatchObject({ client_name: "Cursor", redirect_uris: uris, token_endpoint_auth_method: "none", application_type: "web" });
    expect(registered.body.client_secret).toBeUndefined();
    expect(registered.body.client_id).toMatch(/^[0-9a-f-]{36}$/);
  });

  it("registers VS Code's shape: a loopback port and an https redirect, as a native application", async ({ server }) => {
    const uris = ["http://127.0.0.1:33418", "https://vscode.dev/redirect"];
    const registered = await register(server.url, { client_name: "Visual Studio Code", redirect_uris: uris, token_endpoint_auth_method: "none", application_type: "native", grant_types: ["authorization_code", "refresh_token"] });
    expect(registered.status).toBe(201);
    expect(registered.body).toMatchObject({ redirect_uris: uris, application_type: "native" });
  });

  it("never refuses a registration over its application_type", async ({ server }) => {
    const registered = await register(server.url, { redirect_uris: ["http://localhost:1234/cb"], token_endpoint_auth_method: "none", application_type: "desktop-thing" });
    expect(registered.status).toBe(201);
    expect(registered.body.application_type).toBeUndefined();
  });

  it("judges redirect URIs one by one: refused ones are left out, and only none left refuses the registration", async ({ server }) => {
    const mixed = await register(server.url, {
      redirect_uris: ["javascript:alert(1)", "https://app.example/cb#frag", "http://evil.example/cb", "data:text/html,x", "file:///etc/passwd", "com.example.app:/oauth", "http://[::1]:9/cb"],
      token_endpoint_auth_method: "none",
    });
    expect(mixed.status).toBe(201);
    expect(mixed.body.redirect_uris).toEqual(["com.example.app:/oauth", "http://[::1]:9/cb"]);
    for (const bad of ["javascript:alert(1)", "data:text/html,x", "file:///tmp/x", "https://a.example/cb#x", "http://example.com/cb", "not a uri"]) {
      const refused = await register(server.url, { redirect_uris: [bad], token_endpoint_auth_method: "none" });
      expect(refused.status, bad).toBe(400);
      expect(refused.body.error).toBe("invalid_redirect_uri");
    }
  });

  it("gives a confidential client its secret once and keeps only the secret's hash", async ({ server }) => {
    const registered = await register(server.url, { client_name: "Server app", redirect_uris: ["https://app.example/callback"], token_endpoint_auth_method: "client_secret_post" });
    expect(registered.status).toBe(201);
    const secret = registered.body.client_secret as string;
    expect(secret).toMatch(/^cairn_cs_[A-Za-z0-9_-]{40,}$/);
    expect(registered.body.client_secret_expires_at).toBe(0);
    await withDatabase(server.dataDir, async (db) => {
      const row = await db.get<{ secret_hash: Buffer; metadata: string; redirect_uris: string }>("SELECT secret_hash, metadata, redirect_uris FROM oauth_clients WHERE client_id = ?", registered.body.client_id);
      expect(Buffer.from(row?.secret_hash ?? []).equals(createHash("sha256").update(secret).digest())).toBe(true);
      expect(JSON.stringify(row)).not.toContain(secret);
    });
    // RFC 7591: a client that names no method authenticates with HTTP Basic, and so has a secret.
    const basic = await register(server.url, { redirect_uris: ["https://app.example/callback"] });
    expect(basic.body).toMatchObject({ token_endpoint_auth_method: "client_secret_basic" });
    expect(basic.body.client_secret).toEqual(expect.any(String));
  });

  it("refuses malformed or unbounded metadata as invalid_client_metadata, and bodies that are not JSON", async ({ server }) => {
    const tooMany = await register(server.url, { redirect_uris: Array.from({ length: 11 }, (_, index) => `https://a.example/${index}`) });
    expect(tooMany.status).toBe(400);
    expect((await register(server.url, { redirect_uris: ["https://a.example/cb"], token_endpoint_auth_method: "private_key_jwt" })).body.error).toBe("invalid_client_metadata");
    expect((await register(server.url, { redirect_uris: ["https://a.example/cb"], client_name: "x".repeat(201) })).body.error).toBe("invalid_client_metadata");
    const notJson = await fetch(`${server.url}/oauth/register`, { method: "POST", headers: { "content-type": "application/json" }, body: "{" });
    expect(notJson.status).toBe(400);
    expect(((await notJson.json()) as { error: string }).error).toBe("invalid_request");
    const huge = await fetch(`${server.url}/oauth/register`, { method: "POST", headers: { "content-type": "application/json" }, body: JSON.stringify({ redirect_uris: ["https://a.example/cb"], pad: "x".repeat(20_000) }) });
    expect(huge.status).toBe(413);
  });

  it("answers an unknown client at the token endpoint with invalid_client 401, so SDKs register again", async ({ server }) => {
    for (const clientId of ["00000000-0000-4000-8000-000000000000", "not-a-client"]) {
      const answer = await tokenRequest(server.url, { grant_type: "authorization_code", code: "cairn_ac_x", code_verifier: "v".repeat(43), redirect_uri: "http://127.0.0.1:1/cb", client_id: clientId });
      expect(answer.status).toBe(401);
      expect(answer.body.error).toBe("invalid_client");
    }
  });

  it("limits registrations per address", async ({ server }) => {
    const statuses: number[] = [];
    for (let index = 0; index < 21; index++) statuses.push((await register(server.url, { redirect_uris: ["http://127.0.0.1/cb"], token_endpoint_auth_method: "none" })).status);
    expect(statuses.slice(0, 20).every((status) => status === 201)).toBe(true);
    expect(statuses[20]).toBe(429);
  });
});

describe("OAuth registration with OAUTH_REGISTRATION=key", () => {
  it.override("serverEnv", { OAUTH_REGISTRATION: "key", REGISTRATION_KEY: "registration-key-for-tests" });

  it("needs the registration key as a bearer initial access token (or X-Registration-Key)", async ({ server }) => {
    const body = { redirect_uris: ["http://127.0.0.1:5/cb"], token_endpoint_auth_method: "none" };
    const without = await register(server.url, body);
    expect(without.status).toBe(401);
    expect(without.body.error).toBe("invalid_token");
    expect((await register(server.url, body, { authorization: "Bearer wrong-key" })).status).toBe(401);
    expect((await register(server.url, body, { authorization: "Bearer registration-key-for-tests" })).status).toBe(201);
    expect((await register(server.url, body, { "x-registration-key": "registration-key-for-tests" })).status).toBe(201);
  });
});

describe("OAuth registration with OAUTH_REGISTRATION=off", () => {
  it.override("serverEnv", { OAUTH_REGISTRATION: "off" });

  it("refuses every registration and leaves the endpoint out of the metadata", async ({ server }) => {
    const refused = await register(server.url, { redirect_uris: ["http://127.0.0.1:5/cb"], token_endpoint_auth_method: "none" });
    expect(refused.status).toBe(403);
    const metadata = (await (await fetch(`${server.url}/.well-known/oauth-authorization-server`)).json()) as Record<string, unknown>;
    expect(metadata.registration_endpoint).toBeUndefined();
  });
});

describe("OAuth client expiry", () => {
  it.override("serverEnv", { UI_PASSWORD: OWNER_PASSWORD });

  it("expires a client never used after a day and one unused for 30 days, but never one holding a live refresh token", async ({ server }) => {
    await server.agent("expiry-agent");
    const redirect = "http://127.0.0.1:56001/cb";
    const idle = await register(server.url, { redirect_uris: [redirect], token_endpoint_auth_method: "none" });
    const holder = await register(server.url, { redirect_uris: [redirect], token_endpoint_auth_method: "none" });
    const holderId = holder.body.client_id as string;
    const { verifier, challenge } = pkce();
    const back = await consent(server.url, authorizeUrl(server.url, { client_id: holderId, redirect_uri: redirect, code_challenge: challenge }), await signIn(server.url), { agent: "expiry-agent" });
    const tokens = await tokenRequest(server.url, { grant_type: "authorization_code", code: back.searchParams.get("code") as string, code_verifier: verifier, redirect_uri: redirect, client_id: holderId });
    expect(tokens.status).toBe(200);
    const longAgo = new Date(Date.now() - 31 * 86400_000).toISOString();
    await withDatabase(server.dataDir, async (db) => {
      await db.run("UPDATE oauth_clients SET created_at = ?", longAgo);
      await db.run("UPDATE oauth_clients SET last_used_at = ? WHERE client_id = ?", longAgo, holderId);
    });
    const page = await openAuthorize(authorizeUrl(server.url, { client_id: idle.body.client_id as string, redirect_uri: redirect, code_challenge: pkce().challenge }));
    expect(page.status).toBe(400);
    // The holder's refresh token is live: the client is kept, and the refresh works.
    const refreshed = await tokenRequest(server.url, { grant_type: "refresh_token", refresh_token: tokens.body.refresh_token as string, client_id: holderId });
    expect(refreshed.status).toBe(200);
    // Once its refresh tokens are gone too, it has expired: invalid_client, so the SDK registers again.
    await withDatabase(server.dataDir, async (db) => {
      await db.run("UPDATE oauth_refresh_tokens SET expires_at = ?", longAgo);
      await db.run("UPDATE oauth_clients SET last_used_at = ? WHERE client_id = ?", longAgo, holderId);
    });
    const expired = await tokenRequest(server.url, { grant_type: "refresh_token", refresh_token: refreshed.body.refresh_token as string, client_id: holderId });
    expect(expired).toMatchObject({ status: 401, body: { error: "invalid_client" } });
  });
});
