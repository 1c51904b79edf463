import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import { describe, expect } from "vitest";
import { it } from "../helpers/fixtures.js";
import { callTool } from "../helpers/mcp.js";
import { consent, OWNER_PASSWORD, signIn } from "../helpers/oauth.js";
import { RecordingProvider } from "../helpers/oauth-provider.js";
import type { TestServer } from "../helpers/server.js";

// What /mcp answers an OAuth token that cannot do what it asks (CONTRACT §19): a cairn:read token's
// change is refused over HTTP with the insufficient_scope challenge, where a client can read it, and
// a token refused outright is named invalid_token.

const REDIRECT = "http://127.0.0.1:48131/callback";

/** A host connected through the SDK's own OAuth client, the human having granted `write` or not. */
async function connectedHost(server: TestServer, agentId: string, write: boolean): Promise<{ provider: RecordingProvider; mcpUrl: URL }> {
  const mcpUrl = new URL("/mcp", server.url);
  const provider = new RecordingProvider(REDIRECT, "Scope test host");
  const first = new StreamableHTTPClientTransport(mcpUrl, { authProvider: provider });
  await expect(new Client({ name: "scope-host", version: "1.0.0" }).connect(first)).rejects.toThrow();
  const back = await consent(server.url, (provider.authorizationUrl as URL).href, await signIn(server.url), { agent: agentId, write });
  await first.finishAuth(back.searchParams.get("code") as string);
  provider.authorizationUrl = undefined;
  return { provider, mcpUrl };
}

/** A JSON-RPC request to /mcp with a bearer token, raw, to see the HTTP answer as it is. */
async function rpc(mcpUrl: URL, token: string, body: unknown, sessionId?: string): Promise<Response> {
  return fetch(mcpUrl, {
    method: "POST",
    headers: {
      authorization: `Bearer ${token}`,
      "content-type": "application/json",
      accept: "application/json, text/event-stream",
      "mcp-protocol-version": "2025-06-18",
      ...(sessionId === undefined ? {} : { "mcp-session-id": sessionId }),
    },
    body: JSON.stringify(body),
  });
}

async function openSession(mcpUrl: URL, token: string): Promise<string> {
  const opened = await rpc(mcpUrl, token, { jsonrpc: "2.0", id: 1, method: "initialize", params: { protocolVersion: "2025-06-18", capabilities: {}, clientInfo: { name: "raw", version: "1" } } });
  expect(opened.status).toBe(200);
  const sessionId = opened.headers.get("mcp-session-id") as string;
  expect((await rpc(mcpUrl, token, { jsonrpc: "2.0", method: "notifications/initialized" }, sessionId)).status).toBe(202);
  return sessionId;
}

const writeCall = (id: number) => ({ jsonrpc: "2.0", id, method: "tools/call", params: { name: "memory_write", arguments: { content: "may a reader write?", project: null } } });

describe("OAuth scopes on /mcp", () => {
  it.override("serverEnv", { UI_PASSWORD: OWNER_PASSWORD });

  it("refuses a cairn:read token's change with HTTP 403 and the insufficient_scope challenge, and lets it read", async ({ server }) => {
    await server.agent("scope-reader");
    const { provider, mcpUrl } = await connectedHost(server, "scope-reader", false);
    expect(provider.saved?.scope).toBe("cairn:read");
    const token = provider.saved?.access_token as string;
    const sessionId = await openSession(mcpUrl, token);

    const refused = await rpc(mcpUrl, token, writeCall(2), sessionId);
    expect(refused.status).toBe(403);
    const challenge = refused.headers.get("www-authenticate") ?? "";
    expect(challenge.startsWith("Bearer ")).toBe(true);
    expect(challenge).toContain('error="insufficient_scope"');
    expect(challenge).toContain('scope="cairn:read cairn:write"');
    expect(challenge).toContain(`resource_metadata="${server.url}/.well-known/oauth-protected-resource"`);
    expect(((await refused.json()) as { error: { data: { scope_required: string } } }).error.data.scope_required).toBe("cairn:write");
    // A batch that hides the change among reads is refused the same way.
    const batch = await rpc(mcpUrl, token, [{ jsonrpc: "2.0", id: 3, method: "tools/call", params: { name: "agent_me", arguments: {} } }, writeCall(4)], sessionId);
    expect(batch.status).toBe(403);

    // Nothing was written; a read goes through.
    const written = await server.request<unknown[]>("/memory?agent=scope-reader", { as: server.owner });
    expect(written.status).toBe(200);
    expect(written.body).toEqual([]);
    const read = await rpc(mcpUrl, token, { jsonrpc: "2.0", id: 5, method: "tools/call", params: { name: "agent_me", arguments: {} } }, sessionId);
    expect(read.status).toBe(200);
    expect(JSON.stringify(await read.json())).toContain("scope-reader");
  });

  it("is read by the SDK's client as a scope challenge: it tries to step up (a refresh, which only narrows) and gives up with 403", async ({ server }) => {
    await server.agent("scope-stepper");
    const { provider, mcpUrl } = await connectedHost(server, "scope-stepper", false);
    const client = new Client({ name: "scope-host", version: "1.0.0" });
    await client.connect(new StreamableHTTPClientTransport(mcpUrl, { authProvider: provider }));
    expect((await callTool<{ agent_id: string }>(client, "agent_me")).structured.agent_id).toBe("scope-stepper");
    const before = provider.saved?.refresh_token;
    // The SDK reads the 403's challenge as insufficient_scope and re-authorizes with the scope it
    // names; holding a refresh token, it refreshes, which cannot widen a grant, and then stops.
    await expect(client.callTool({ name: "memory_write", arguments: { content: "step up, please", project: null } })).rejects.toThrow(/403 after trying upscoping/);
    expect(provider.saved?.refresh_token).not.toBe(before);
    expect(provider.saved?.scope).toBe("cairn:read");
    await client.close();
  });

  it("names a refused token invalid_token, on /mcp and REST, and a request with no credentials not at all", async ({ server }) => {
    await server.agent("scope-revoked");
    const { provider, mcpUrl } = await connectedHost(server, "scope-revoked", true);
    const token = provider.saved?.access_token as string;
    expect((await rpc(mcpUrl, token, { jsonrpc: "2.0", id: 1, method: "initialize", params: { protocolVersion: "2025-06-18", capabilities: {}, clientInfo: { name: "raw", version: "1" } } })).status).toBe(200);
    const revoke = await fetch(`${server.url}/oauth/revoke`, {
      method: "POST",
      headers: { "content-type": "application/x-www-form-urlencoded" },
      body: new URLSearchParams({ token, client_id: provider.client?.client_id as string }),
    });
    expect(revoke.status).toBe(200);

    for (const answer of [
      await rpc(mcpUrl, token, { jsonrpc: "2.0", id: 2, method: "initialize", params: { protocolVersion: "2025-06-18", capabilities: {}, clientInfo: { name: "raw", version: "1" } } }),
      await fetch(`${server.url}/agents/me`, { headers: { authorization: `Bearer ${token}` } }),
    ]) {
      expect(answer.status).toBe(401);
      const challenge = answer.headers.get("www-authenticate") ?? "";
      expect(challenge.startsWith("Bearer ")).toBe(true);
      expect(challenge).toContain('error="invalid_token"');
      expect(challenge).not.toContain(token);
    }
    for (const answer of [await fetch(mcpUrl, { method: "POST", headers: { "content-type": "application/json" }, body: "{}" }), await fetch(`${server.url}/agents/me`)]) {
      expect(answer.status).toBe(401);
      expect(answer.headers.get("www-authenticate")).not.toContain("error=");
    }
    // A wrong agent key is a key refused, not a token: no invalid_token.
    const badKey = await fetch(`${server.url}/agents/me`, { headers: { "x-agent-id": "scope-revoked", "x-api-key": "not-the-key-0123456789" } });
    expect(badKey.status).toBe(401);
    expect(badKey.headers.get("www-authenticate")).not.toContain("error=");
  });
});
