import { createHash } from "node:crypto";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import { describe, expect } from "vitest";
import { withDatabase } from "../helpers/database.js";
import { it } from "../helpers/fixtures.js";
import { callTool } from "../helpers/mcp.js";
import type { Credentials, TestServer } from "../helpers/server.js";

interface TokenBody {
  access_token: string;
  token_type: string;
  expires_in: number;
}

async function token(server: TestServer, as: Credentials, form = true): Promise<{ status: number; body: TokenBody & { error?: string } }> {
  const response = await fetch(new URL("/oauth/token", server.url), {
    method: "POST",
    headers: { "content-type": form ? "application/x-www-form-urlencoded" : "application/json" },
    body: form
      ? new URLSearchParams({ grant_type: "client_credentials", client_id: as.agentId, client_secret: as.apiKey }).toString()
      : JSON.stringify({ grant_type: "client_credentials", client_id: as.agentId, client_secret: as.apiKey }),
  });
  return { status: response.status, body: (await response.json()) as TokenBody & { error?: string } };
}

const withBearer = (server: TestServer, bearer: string, path: string): Promise<Response> =>
  fetch(new URL(path, server.url), { headers: { authorization: `Bearer ${bearer}` } });

describe("OAuth client credentials", () => {
  it("issues an hour's bearer token for an agent's id and key, by form or JSON, stored only as a hash", async ({ server }) => {
    const agent = await server.agent("oauth-form");
    for (const form of [true, false]) {
      const issued = await token(server, agent, form);
      expect(issued.status).toBe(200);
      expect(issued.body).toMatchObject({ token_type: "bearer", expires_in: 3600 });
      expect(issued.body.access_token).toMatch(/^cairn_at_[A-Za-z0-9_-]{40,}$/);
      const me = await withBearer(server, issued.body.access_token, "/agents/me");
      expect(me.status).toBe(200);
      expect(((await me.json()) as { agent_id: string }).agent_id).toBe("oauth-form");
      // The database holds the token's SHA-256, never the token.
      const hash = createHash("sha256").update(issued.body.access_token).digest();
      await withDatabase(server.dataDir, async (db) => {
        expect((await db.get<{ n: number }>("SELECT count(*) AS n FROM oauth_tokens WHERE token_hash = ?", hash))?.n).toBe(1);
        expect((await db.get<{ n: number }>("SELECT count(*) AS n FROM oauth_tokens WHERE CAST(token_hash AS TEXT) LIKE '%cairn_at_%'"))?.n).toBe(0);
      });
    }
    const basic = await fetch(new URL("/oauth/token", server.url), {
      method: "POST",
      headers: { "content-type": "application/x-www-form-urlencoded", authorization: `Basic ${Buffer.from(`${agent.agentId}:${agent.apiKey}`).toString("base64")}` },
      body: "grant_type=client_credentials",
    });
    expect(basic.status).toBe(200);
  });

  it("answers OAuth errors: invalid_client for a wrong pair, unsupported_grant_type, invalid_request", async ({ server }) => {
    const agent = await server.agent("oauth-errors");
    const wrong = await token(server, { agentId: agent.agentId, apiKey: "cairn_wrong" });
    expect(wrong.status).toBe(401);
    expect(wrong.body.error).toBe("invalid_client");
    const unknown = await token(server, { agentId: "nobody-here", apiKey: agent.apiKey });
    expect(unknown).toEqual(wrong);
    const grant = await fetch(new URL("/oauth/token", server.url), {
      method: "POST",
      headers: { "content-type": "application/x-www-form-urlencoded" },
      body: "grant_type=password&username=a&password=b",
    });
    expect(grant.status).toBe(400);
    expect(((await grant.json()) as { error: string }).error).toBe("unsupported_grant_type");
    const missing = await fetch(new URL("/oauth/token", server.url), {
      method: "POST",
      headers: { "content-type": "application/x-www-form-urlencoded" },
      body: "grant_type=client_credentials",
    });
    expect(missing.status).toBe(400);
    expect(((await missing.json()) as { error: string }).error).toBe("invalid_request");
    expect((await withBearer(server, "cairn_at_made-up", "/agents/me")).status).toBe(401);
  });

  it("revokes tokens when the key is rotated or the agent deleted, and follows a rename", async ({ server }) => {
    const agent = await server.agent("oauth-revoked");
    const first = (await token(server, agent)).body.access_token;
    const renamed = await server.request("/agents/me", { as: agent, method: "PATCH", body: { agent_id: "oauth-renamed" } });
    expect(renamed.status).toBe(200);
    const me = await withBearer(server, first, "/agents/me");
    expect(((await me.json()) as { agent_id: string }).agent_id).toBe("oauth-renamed");
    const rotated = await server.request<{ api_key: string }>("/agents/oauth-renamed/rotate-key", { as: { agentId: "oauth-renamed", apiKey: agent.apiKey }, method: "POST" });
    expect(rotated.status).toBe(200);
    expect((await withBearer(server, first, "/agents/me")).status).toBe(401);

    const current = { agentId: "oauth-renamed", apiKey: rotated.body.api_key };
    const second = (await token(server, current)).body.access_token;
    expect((await withBearer(server, second, "/agents/me")).status).toBe(200);
    expect((await server.request("/agents/me", { as: current, method: "DELETE" })).status).toBe(204);
    expect((await withBearer(server, second, "/agents/me")).status).toBe(401);
  });

  it("works on /mcp, whose 401 points at the protected-resource metadata", async ({ server }) => {
    const agent = await server.agent("oauth-mcp");
    const bearer = (await token(server, agent)).body.access_token;
    const client = new Client({ name: "oauth-test", version: "1.0.0" });
    await client.connect(new StreamableHTTPClientTransport(new URL("/mcp", server.url), { requestInit: { headers: { authorization: `Bearer ${bearer}` } } }));
    const me = await callTool<{ agent_id: string }>(client, "agent_me");
    expect(me.structured.agent_id).toBe("oauth-mcp");
    await client.close();

    const refused = await fetch(new URL("/mcp", server.url), {
      method: "POST",
      headers: { "content-type": "application/json", accept: "application/json, text/event-stream" },
      body: JSON.stringify({ jsonrpc: "2.0", id: 1, method: "initialize", params: { protocolVersion: "2025-06-18", capabilities: {}, clientInfo: { name: "x", version: "1" } } }),
    });
    expect(refused.status).toBe(401);
    expect(refused.headers.get("www-authenticate")).toContain(`resource_metadata="${server.url}/.well-known/oauth-protected-resource"`);

    const resource = (await (await fetch(new URL("/.well-known/oauth-protected-resource", server.url))).json()) as { resource: string; authorization_servers: string[] };
    expect(resource).toMatchObject({ resource: `${server.url}/mcp`, authorization_servers: [server.url] });
    const metadata = (await (await fetch(new URL("/.well-known/oauth-authorization-server", server.url))).json()) as { token_endpoint: string; grant_types_supported: string[] };
    expect(metadata.token_endpoint).toBe(`${server.url}/oauth/token`);
    expect(metadata.grant_types_supported).toContain("client_credentials");
  });
});
