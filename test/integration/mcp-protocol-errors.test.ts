import type { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { ListResourceTemplatesResultSchema } from "@modelcontextprotocol/sdk/types.js";
import { describe, expect } from "vitest";
import { test } from "../helpers/fixtures.js";
import { callTool, mcpClient } from "../helpers/mcp.js";

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
});
