import type { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { ListResourceTemplatesResultSchema } from "@modelcontextprotocol/sdk/types.js";
import { describe, expect } from "vitest";
import { test } from "../helpers/fixtures.js";
import { callTool, mcpClient } from "../helpers/mcp.js";
import type { Credentials, TestServer } from "../helpers/server.js";

const MCP_HEADERS = { accept: "application/json, text/event-stream", "content-type": "application/json" };

interface RpcAnswer {
  status: number;
  body: { jsonrpc?: string; id?: unknown; error?: { code: number; message: string; data?: unknown } };
}

/** A raw POST to /mcp as `as`: what a client's bytes get before any SDK reads them. */
async function post(server: TestServer, as: Credentials, body: string, headers: Record<string, string> = {}): Promise<RpcAnswer> {
  const response = await fetch(new URL("/mcp", server.url), {
    method: "POST",
    headers: { ...MCP_HEADERS, "X-Agent-ID": as.agentId, "X-API-Key": as.apiKey, ...headers },
    body,
  });
  return { status: response.status, body: (await response.json()) as RpcAnswer["body"] };
}

describe("MCP protocol errors on /mcp (the specification's codes, not an internal error)", () => {
  const it = test
    .extend("alice", ({ server }) => server.agent("rpc-alice"))
    .extend("client", async ({ server, alice }, { onCleanup }) => {
      const client: Client = await mcpClient(server, alice);
      onCleanup(() => client.close());
      return client;
    });

  it("answers a call of a tool that does not exist with invalid params (-32602), not a tool result", async ({ client }) => {
    await expect(client.callTool({ name: "no_such_tool", arguments: {} })).rejects.toMatchObject({ code: -32602, message: expect.stringContaining("no_such_tool") as unknown });
  });

  it("still answers a tool's own refusal as an isError result", async ({ client }) => {
    const refused = await callTool(client, "memory_get", { id: "00000000-0000-7000-8000-000000000000" });
    expect(refused.isError).toBe(true);
    expect(refused.structured).toMatchObject({ code: "NOT_FOUND" });
  });

  it("answers a prompt that does not exist with invalid params (-32602), whatever the name", async ({ client }) => {
    for (const name of ["no_such_prompt", "constructor", "__proto__"]) {
      await expect(client.getPrompt({ name })).rejects.toMatchObject({ code: -32602, message: expect.stringContaining(name) as unknown });
    }
  });

  it("answers a read of, or a subscription to, a resource that does not exist with resource not found (-32002) naming the URI", async ({ client }) => {
    await expect(client.readResource({ uri: "cairn://elsewhere" })).rejects.toMatchObject({ code: -32002, data: { uri: "cairn://elsewhere" } });
    await expect(client.subscribeResource({ uri: "cairn://elsewhere" })).rejects.toMatchObject({ code: -32002 });
    await expect(client.unsubscribeResource({ uri: "cairn://elsewhere" })).rejects.toMatchObject({ code: -32002 });
  });

  it("lists its resource templates: none", async ({ client }) => {
    const listed = await client.request({ method: "resources/templates/list", params: {} }, ListResourceTemplatesResultSchema);
    expect(listed.resourceTemplates).toEqual([]);
  });

  it("answers a body that is not JSON with a JSON-RPC parse error (-32700) and 400", async ({ server, alice }) => {
    const answer = await post(server, alice, '{"jsonrpc": "2.0", "id": 1, "method": ');
    expect(answer).toEqual({ status: 400, body: { jsonrpc: "2.0", id: null, error: { code: -32700, message: expect.stringMatching(/^Parse error/) as unknown } } });
  });

  it("answers JSON that names a key twice with invalid request (-32600)", async ({ server, alice }) => {
    const answer = await post(server, alice, '{"jsonrpc": "2.0", "id": 1, "id": 2, "method": "ping"}');
    expect(answer.status).toBe(400);
    expect(answer.body).toMatchObject({ jsonrpc: "2.0", id: null, error: { code: -32600, data: { errors: [{ path: "id", message: "duplicate key" }] } } });
  });

  it("answers a body that is not JSON by its content type with 415 and a JSON-RPC error", async ({ server, alice }) => {
    const answer = await post(server, alice, "ping", { "content-type": "text/plain" });
    expect(answer.status).toBe(415);
    expect(answer.body).toMatchObject({ jsonrpc: "2.0", id: null, error: { code: -32000 } });
  });
});

describe("MCP protocol errors on /mcp for a body over the size limit", () => {
  const it = test.extend("alice", ({ server }) => server.agent("rpc-large"));
  it.override("serverEnv", { MAX_BODY_BYTES: "2048", MAX_CONTENT_BYTES: "1024" });

  it("answers 413 with a JSON-RPC error", async ({ server, alice }) => {
    const answer = await post(server, alice, JSON.stringify({ jsonrpc: "2.0", id: 1, method: "ping", params: { padding: "x".repeat(4096) } }));
    expect(answer.status).toBe(413);
    expect(answer.body).toMatchObject({ jsonrpc: "2.0", id: null, error: { code: -32000 } });
  });
});
