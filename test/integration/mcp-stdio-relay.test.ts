import { spawn } from "node:child_process";
import { resolve } from "node:path";
import { createInterface } from "node:readline";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js";
import { LoggingMessageNotificationSchema } from "@modelcontextprotocol/sdk/types.js";
import { describe, expect } from "vitest";
import { MAX_MESSAGE_BYTES } from "../../src/mcp/bridge.js";
import { it, test } from "../helpers/fixtures.js";
import { startStreamingUpstream, type StreamingUpstream } from "../helpers/streaming-upstream.js";
import { eventually } from "../helpers/wait.js";

const CLI = resolve(import.meta.dirname, "../../dist/src/cli.js");
const agent = { agentId: "relayed", apiKey: "cairn_relayed-agent-key" };

const bridgeEnv = (url: string, as: { agentId: string; apiKey: string }, extra: Record<string, string> = {}): Record<string, string> => ({
  PATH: process.env.PATH ?? "/usr/bin:/bin",
  CAIRN_URL: url,
  CAIRN_AGENT_ID: as.agentId,
  CAIRN_API_KEY: as.apiKey,
  ...extra,
});

/** `cairn mcp` spoken to line by line, as a host's stdio transport does. */
function rawBridge(env: Record<string, string>) {
  const child = spawn(process.execPath, [CLI, "mcp"], { env, stdio: ["pipe", "pipe", "pipe"] });
  const lines: string[] = [];
  let stderr = "";
  createInterface({ input: child.stdout }).on("line", (line) => lines.push(line));
  child.stderr.on("data", (chunk: Buffer) => (stderr += chunk.toString("utf8")));
  const exited = new Promise<number | null>((resolveExit) => child.once("close", (code) => resolveExit(code)));
  return {
    child,
    lines,
    stderr: () => stderr,
    exited,
    messages: () => lines.map((line) => JSON.parse(line) as { id?: unknown; result?: unknown; error?: { code: number; message: string } }),
  };
}

const initialize = (id: number): string =>
  `${JSON.stringify({ jsonrpc: "2.0", id, method: "initialize", params: { protocolVersion: "2025-06-18", capabilities: {}, clientInfo: { name: "raw", version: "1" } } })}\n`;

describe("cairn mcp relaying a server that streams", () => {
  const it = test
    // eslint-disable-next-line no-empty-pattern -- vitest reads a fixture's dependencies from its first parameter, which must be a pattern
    .extend("upstream", async ({}, { onCleanup }) => {
      const upstream = await startStreamingUpstream(agent);
      onCleanup(() => upstream.close());
      return upstream;
    })
    .extend("host", async ({ upstream }: { upstream: StreamingUpstream }, { onCleanup }) => {
      const transport = new StdioClientTransport({ command: process.execPath, args: [CLI, "mcp"], env: bridgeEnv(upstream.url, agent, { MCP_TOOLSET: "core" }), stderr: "pipe" });
      const client = new Client({ name: "relay-test", version: "1.0.0" });
      const logged: string[] = [];
      client.setNotificationHandler(LoggingMessageNotificationSchema, (notification) => {
        logged.push(String(notification.params.data));
      });
      await client.connect(transport);
      onCleanup(() => client.close());
      return { client, logged };
    });

  it("relays an answer that comes as an event stream, with the messages before it, in order", async ({ upstream, host }) => {
    const result = await host.client.callTool({ name: "steps", arguments: {} });
    expect(result.content).toEqual([{ type: "text", text: "done" }]);
    expect(host.logged).toEqual(["one", "two", "three"]);
    // After initialize every request names the session and the version the server agreed to; all carry the tool set.
    const [opening, ...later] = upstream.requests;
    expect(opening?.headers["mcp-session-id"]).toBeUndefined();
    expect(opening?.headers["mcp-protocol-version"]).toBeUndefined();
    const version = later[0]?.headers["mcp-protocol-version"];
    expect(version).toMatch(/^\d{4}-\d{2}-\d{2}$/);
    for (const request of later) expect(request.headers).toMatchObject({ "mcp-session-id": expect.any(String) as unknown, "mcp-protocol-version": version });
    expect(upstream.requests.every((request) => request.headers["x-mcp-toolset"] === "core")).toBe(true);
  });

  it("relays what the server sends unasked on the GET stream, and resumes a dropped stream from its last event", async ({ upstream, host }) => {
    expect(await eventually(() => upstream.requests.some((request) => request.method === "GET"), 5000)).toBe(true);
    await upstream.notify("before");
    expect(await eventually(() => host.logged.includes("before"), 5000)).toBe(true);
    upstream.dropStream();
    await upstream.notify("while away");
    expect(await eventually(() => host.logged.includes("while away"), 10_000)).toBe(true);
    const resumed = upstream.requests.filter((request) => request.method === "GET").at(-1);
    expect(resumed?.headers["last-event-id"]).toEqual(expect.any(String));
    await upstream.notify("after");
    expect(await eventually(() => host.logged.includes("after"), 5000)).toBe(true);
    expect(host.logged).toEqual(["before", "while away", "after"]);
  });

  it("resumes a call's event stream that the server ended before the answer, from its last event", async ({ upstream, host }) => {
    const result = await host.client.callTool({ name: "pause", arguments: {} });
    expect(result.content).toEqual([{ type: "text", text: "resumed" }]);
    expect(host.logged).toEqual(["before the pause", "after the pause"]);
    expect(upstream.requests.filter((request) => request.method === "GET" && request.headers["last-event-id"] !== undefined)).toHaveLength(1);
  });

  it("answers a call whose connection was cut with a JSON-RPC error, and goes on", async ({ host }) => {
    await expect(host.client.callTool({ name: "vanish", arguments: {} })).rejects.toMatchObject({ code: -32603 });
    expect((await host.client.callTool({ name: "steps", arguments: {} })).content).toEqual([{ type: "text", text: "done" }]);
  });

  it("ends the session on the server when the host goes", async ({ upstream, host }) => {
    await host.client.close();
    expect(await eventually(() => upstream.requests.some((request) => request.method === "DELETE"), 5000)).toBe(true);
    expect(upstream.requests.find((request) => request.method === "DELETE")?.headers["mcp-session-id"]).toEqual(expect.any(String));
  });
});

describe("cairn mcp refusing", () => {
  it("answers the host's initialize with a JSON-RPC error when the server refuses the key, says so on stderr, and exits 1", async ({ server }) => {
    const registered = await server.agent("refused-agent");
    const bridge = rawBridge(bridgeEnv(server.url, { agentId: registered.agentId, apiKey: "cairn_not-the-key" }));
    bridge.child.stdin.write(initialize(1));
    expect(await bridge.exited).toBe(1);
    expect(bridge.messages()).toEqual([
      { jsonrpc: "2.0", id: 1, error: { code: -32603, message: expect.stringMatching(/refused the credentials of refused-agent/) as unknown } },
    ]);
    expect(bridge.stderr()).toMatch(/refused the credentials of refused-agent/);
  });

  it("drops a line larger than its limit and a line that is no JSON, answers each with an error, and goes on", { timeout: 60_000 }, async ({ server }) => {
    const registered = await server.agent("oversize-agent");
    const bridge = rawBridge(bridgeEnv(server.url, registered));
    bridge.child.stdin.write(`{"jsonrpc":"2.0","id":7,"method":"ping","params":{"pad":"${"x".repeat(MAX_MESSAGE_BYTES)}"}}\n`);
    bridge.child.stdin.write("not json\n");
    bridge.child.stdin.write(initialize(1));
    expect(await eventually(() => bridge.lines.length >= 3, 30_000)).toBe(true);
    bridge.child.stdin.end();
    expect(await bridge.exited).toBe(0);
    const [oversize, unreadable, initialized] = bridge.messages();
    expect(oversize).toMatchObject({ id: null, error: { code: -32600, message: expect.stringMatching(/larger than 67108864 bytes/) as unknown } });
    expect(unreadable).toMatchObject({ id: null, error: { code: -32700 } });
    expect(initialized).toMatchObject({ id: 1, result: { serverInfo: { name: "cairn" } } });
    expect(bridge.stderr()).toMatch(/larger than 67108864 bytes/);
  });
});
