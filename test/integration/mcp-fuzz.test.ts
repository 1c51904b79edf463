import { McpError } from "@modelcontextprotocol/sdk/types.js";
import { describe, expect } from "vitest";
import { test } from "../helpers/fixtures.js";
import { PER_ROUTE, seedFuzzTargets, valueOf, type Schema } from "../helpers/fuzz-values.js";
import { mcpClient } from "../helpers/mcp.js";

// Every tool an agent is offered, called through the official SDK's client with arguments built
// from the tool's own input schema (a wrong value now and then): each call is answered, as a result
// or as a tool error the agent can read, never as an internal error, and the session still works.

const INTERNAL = -32603;

describe("every MCP tool, called with arguments its schema mostly takes", () => {
  const it = test.extend("agent", ({ server }) => server.agent("mcp-fuzzer"));

  it("answers each call with a result or a readable refusal, never an internal error", { timeout: 300_000 }, async ({ server, agent }) => {
    await seedFuzzTargets(server, agent);
    const failures: string[] = [];
    let called = 0;
    for (const as of [agent, server.owner]) {
      const client = await mcpClient(server, as);
      try {
        const { tools } = await client.listTools();
        for (const tool of tools) {
          // Ending its own identity would only end the fuzz early.
          if (tool.name === "agent_delete_me" || tool.name === "agent_rotate_key" || tool.name === "agent_delete") continue;
          for (let round = 0; round < Math.ceil(PER_ROUTE / 2); round++) {
            const args = valueOf(tool.inputSchema as Schema) as Record<string, unknown>;
            if (tool.name === "wait_for") args.timeout = 1;
            called++;
            try {
              const result = await client.callTool({ name: tool.name, arguments: args });
              const text = (result.content as { text?: string }[]).map((part) => part.text ?? "").join("");
              if (result.isError === true && /"code":"INTERNAL"/.test(text)) failures.push(`${tool.name} ${JSON.stringify(args).slice(0, 300)} → ${text.slice(0, 200)}`);
            } catch (error) {
              if (!(error instanceof McpError) || error.code === INTERNAL) failures.push(`${tool.name} ${JSON.stringify(args).slice(0, 300)} → ${String(error).slice(0, 200)}`);
            }
          }
        }
        // The session still answers.
        expect((await client.listTools()).tools.length).toBe(tools.length);
      } finally {
        await client.close();
      }
    }
    expect(called).toBeGreaterThan(200);
    expect(failures).toEqual([]);
  });
});
