import { auth, UnauthorizedError } from "@modelcontextprotocol/sdk/client/auth.js";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import { describe, expect } from "vitest";
import { it } from "../helpers/fixtures.js";
import { callTool } from "../helpers/mcp.js";
import { consent, OWNER_PASSWORD, signIn, tokenRequest } from "../helpers/oauth.js";
import { RecordingProvider } from "../helpers/oauth-provider.js";

// The MCP TypeScript SDK's own OAuth client, from nothing but the server's URL to a tool call as
// the agent the human chose, and on through a refresh (CONTRACT §19).

describe("OAuth with the MCP SDK's client", () => {
  it.override("serverEnv", { UI_PASSWORD: OWNER_PASSWORD });

  it("discovers, registers, is authorized by a human, calls a tool as the chosen agent, and refreshes", async ({ server }) => {
    const worker = await server.agent("sdk-worker");
    const mcpUrl = new URL("/mcp", server.url);
    const provider = new RecordingProvider("http://127.0.0.1:48111/callback", "SDK test host");

    // 1. The first connection has no token: the SDK discovers, registers and sends the human to authorize.
    const first = new StreamableHTTPClientTransport(mcpUrl, { authProvider: provider });
    await expect(new Client({ name: "sdk-host", version: "1.0.0" }).connect(first)).rejects.toBeInstanceOf(UnauthorizedError);
    expect(provider.client?.client_id).toMatch(/^[0-9a-f-]{36}$/);
    const authorizationUrl = provider.authorizationUrl as URL;
    expect(authorizationUrl.searchParams.get("resource")).toBe(`${server.url}/mcp`);
    expect(authorizationUrl.searchParams.get("code_challenge_method")).toBe("S256");
    expect(authorizationUrl.searchParams.get("scope")).toBe("cairn:read cairn:write");

    // 2. The human signs in, chooses the agent and allows; the browser comes back with the code.
    const back = await consent(server.url, authorizationUrl.href, await signIn(server.url), { agent: worker.agentId });
    expect(back.searchParams.get("iss")).toBe(server.url);
    await first.finishAuth(back.searchParams.get("code") as string);
    expect(provider.saved).toMatchObject({ token_type: "bearer", scope: "cairn:read cairn:write" });
    expect(provider.saved?.refresh_token).toMatch(/^cairn_rt_/);

    // 3. Connected: the tools act as the chosen agent.
    const client = new Client({ name: "sdk-host", version: "1.0.0" });
    await client.connect(new StreamableHTTPClientTransport(mcpUrl, { authProvider: provider }));
    const me = await callTool<{ agent_id: string }>(client, "agent_me");
    expect(me.structured.agent_id).toBe("sdk-worker");
    const written = await callTool<{ id: string }>(client, "memory_write", { content: "written through OAuth by the SDK client", project: null });
    expect(written.isError).toBe(false);
    await client.close();

    // 4. A refresh rotates both tokens; the new access token works, the old refresh token is spent.
    const before = provider.saved;
    expect(await auth(provider, { serverUrl: mcpUrl })).toBe("AUTHORIZED");
    expect(provider.saved?.access_token).not.toBe(before?.access_token);
    expect(provider.saved?.refresh_token).not.toBe(before?.refresh_token);
    const again = new Client({ name: "sdk-host", version: "1.0.0" });
    await again.connect(new StreamableHTTPClientTransport(mcpUrl, { authProvider: provider }));
    expect((await callTool<{ agent_id: string }>(again, "agent_me")).structured.agent_id).toBe("sdk-worker");
    await again.close();

    // 5. The spent refresh token presented again is reuse: the grant and every token of it are revoked.
    const reused = await tokenRequest(server.url, { grant_type: "refresh_token", refresh_token: before?.refresh_token as string, client_id: provider.client?.client_id as string });
    expect(reused.status).toBe(400);
    expect(reused.body.error).toBe("invalid_grant");
    const revoked = await fetch(`${server.url}/agents/me`, { headers: { authorization: `Bearer ${provider.saved?.access_token as string}` } });
    expect(revoked.status).toBe(401);
  });

  it("answers an unknown client at the token endpoint so that the SDK forgets it and registers again", async ({ server }) => {
    const mcpUrl = new URL("/mcp", server.url);
    const provider = new RecordingProvider("http://127.0.0.1:48112/callback", "Forgotten host");
    provider.client = { client_id: "00000000-0000-4000-8000-000000000000", issuer: server.url };
    provider.saved = { access_token: "cairn_at_gone", token_type: "bearer", refresh_token: "cairn_rt_gone", issuer: server.url };
    // The refresh fails with invalid_client: the SDK drops everything, registers anew and sends the human to authorize.
    expect(await auth(provider, { serverUrl: mcpUrl })).toBe("REDIRECT");
    expect(provider.invalidated).toContain("all");
    expect(provider.client?.client_id).not.toBe("00000000-0000-4000-8000-000000000000");
  });
});
