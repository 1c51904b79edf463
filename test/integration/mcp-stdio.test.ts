import { spawn } from "node:child_process";
import { existsSync, readFileSync, rmSync } from "node:fs";
import { request as httpRequest, createServer as createHttpServer, type Server as HttpServer } from "node:http";
import { createServer } from "node:net";
import { join, resolve } from "node:path";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js";
import { ResourceUpdatedNotificationSchema } from "@modelcontextprotocol/sdk/types.js";
import { afterAll, describe, expect } from "vitest";
import { it, test } from "../helpers/fixtures.js";
import { callTool } from "../helpers/mcp.js";
import { eventually } from "../helpers/wait.js";
import { runCli } from "../helpers/cli.js";
import { tempDir, testEnv, type Credentials, type TestServer } from "../helpers/server.js";

const CLI = resolve(import.meta.dirname, "../../dist/src/cli.js");

/** The environment a host gives `cairn mcp`: nothing of the test server's own settings. */
function bridgeEnv(url: string, as: Credentials | null, extra: Record<string, string> = {}): Record<string, string> {
  return {
    PATH: process.env.PATH ?? "/usr/bin:/bin",
    CAIRN_URL: url,
    ...(as ? { CAIRN_AGENT_ID: as.agentId, CAIRN_API_KEY: as.apiKey } : {}),
    ...extra,
  };
}

async function bridge(env: Record<string, string>, stderr: string[] = []): Promise<Client> {
  const transport = new StdioClientTransport({ command: process.execPath, args: [CLI, "mcp"], env, stderr: "pipe" });
  transport.stderr?.on("data", (chunk: Buffer) => stderr.push(chunk.toString("utf8")));
  const client = new Client({ name: "stdio-test", version: "1.0.0" });
  await client.connect(transport);
  return client;
}

/** A loopback proxy to `target` that holds every GET for `delayMs` first: a slow network to the bridge's message stream. */
async function slowGetProxy(target: string, delayMs: number): Promise<{ url: string; server: HttpServer }> {
  const upstream = new URL(target);
  const server = createHttpServer((incoming, outgoing) => {
    const forward = (): void => {
      const proxied = httpRequest({ hostname: upstream.hostname, port: upstream.port, path: incoming.url, method: incoming.method, headers: incoming.headers }, (answer) => {
        outgoing.writeHead(answer.statusCode ?? 502, answer.headers);
        answer.pipe(outgoing);
      });
      proxied.on("error", () => outgoing.destroy());
      incoming.pipe(proxied);
    };
    if (incoming.method === "GET") setTimeout(forward, delayMs);
    else forward();
  });
  await new Promise<void>((listening) => server.listen(0, "127.0.0.1", listening));
  const address = server.address() as { port: number };
  return { url: `http://127.0.0.1:${address.port}`, server };
}

/** Subscribes the host to its inbox and sends it a message: whether `resources/updated` for it came within 5 s. */
async function inboxUpdateArrives(client: Client, server: TestServer, agent: Credentials, body: string): Promise<boolean> {
  const updates: string[] = [];
  client.setNotificationHandler(ResourceUpdatedNotificationSchema, (notification) => {
    updates.push(notification.params.uri);
  });
  await client.subscribeResource({ uri: "cairn://inbox" });
  await server.request("/messages", { as: server.owner, body: { to: agent.agentId, body } });
  return eventually(() => updates.includes("cairn://inbox"), 5000);
}

function run(args: string[], env: Record<string, string>): Promise<{ code: number | null; stdout: string; stderr: string }> {
  return new Promise((resolveRun) => {
    const child = spawn(process.execPath, [CLI, ...args], { env, stdio: ["pipe", "pipe", "pipe"] });
    let stdout = "";
    let stderr = "";
    child.stdout.on("data", (chunk: Buffer) => (stdout += chunk.toString("utf8")));
    child.stderr.on("data", (chunk: Buffer) => (stderr += chunk.toString("utf8")));
    child.on("close", (code) => resolveRun({ code, stdout, stderr }));
    child.stdin.end();
  });
}

const freePort = (): Promise<number> =>
  new Promise((resolvePort, reject) => {
    const probe = createServer();
    probe.once("error", reject);
    probe.listen(0, "127.0.0.1", () => {
      const { port } = probe.address() as { port: number };
      probe.close(() => resolvePort(port));
    });
  });

describe("cairn mcp (stdio)", () => {
  /** Open MCP sessions on the server, as its metrics report them. */
  const openSessions = async (server: TestServer): Promise<number> => {
    const text = (await server.request<string>("/metrics", { as: server.owner })).text;
    return Number(/^cairn_mcp_sessions_open (\d+)/m.exec(text)?.[1] ?? Number.NaN);
  };
  const it = test
    .extend("agent", ({ server }) => server.agent("stdio-agent"))
    // The bridges a test starts, each closed after it.
    // eslint-disable-next-line no-empty-pattern -- vitest reads a fixture's dependencies from its first parameter, which must be a pattern
    .extend("clients", ({}, { onCleanup }) => {
      const clients: Client[] = [];
      onCleanup(async () => {
        for (const client of clients) await client.close();
      });
      return clients;
    });
  it.override("serverEnv", { DIRECTIVE_WRITERS: "human" });

  it("lists the server's tools and runs them as the configured agent", async ({ server, agent, clients }) => {
    const client = await bridge(bridgeEnv(server.url, agent));
    clients.push(client);
    expect(client.getInstructions()).toMatch(/session_handoff/);
    const { tools } = await client.listTools();
    expect(tools.map((tool) => tool.name)).toEqual(expect.arrayContaining(["memory_write", "task_claim", "session_start", "wait_for"]));
    const written = await callTool<{ id: string; created: boolean }>(client, "memory_write", { content: "written through the stdio bridge" });
    expect(written.structured.created).toBe(true);
    const read = await server.request<{ content: string; agent_id: string }>(`/memory/${written.structured.id}`, { as: agent });
    expect(read.body).toMatchObject({ content: "written through the stdio bridge", agent_id: agent.agentId });
    const refused = await callTool<{ code: string; detail: string }>(client, "memory_write", { content: "a rule", type: "directive" });
    expect(refused.isError).toBe(true);
    expect(refused.structured).toEqual({ detail: "directive writes require elevated permission", code: "FORBIDDEN" });
  });

  it("holds the host's messages after initialized until its message stream is open, so no update is lost to a slow GET", async ({ server, agent, clients }) => {
    const proxy = await slowGetProxy(server.url, 1_500);
    try {
      const client = await bridge(bridgeEnv(proxy.url, agent));
      clients.push(client);
      expect(await inboxUpdateArrives(client, server, agent, "past a slow stream")).toBe(true);
    } finally {
      proxy.server.closeAllConnections();
      proxy.server.close();
    }
  });

  it("carries resources, their update notifications and prompts", async ({ server, agent, clients }) => {
    const client = await bridge(bridgeEnv(server.url, agent));
    clients.push(client);
    expect(await inboxUpdateArrives(client, server, agent, "through the bridge")).toBe(true);
    const inbox = JSON.parse(((await client.readResource({ uri: "cairn://inbox" })).contents[0] as { text: string }).text) as { body: string }[];
    expect(inbox.map((message) => message.body)).toContain("through the bridge");
    expect((await client.listPrompts()).prompts.map((prompt) => prompt.name)).toContain("end_session");
    expect((await client.listResourceTemplates()).resourceTemplates).toEqual([]);
    // The server's protocol errors reach the host with their codes.
    await expect(client.readResource({ uri: "cairn://elsewhere" })).rejects.toMatchObject({ code: -32002 });
    await expect(client.callTool({ name: "no_such_tool", arguments: {} })).rejects.toMatchObject({ code: -32602 });
  });

  it("says on stderr, not stdout, what is missing or wrong, and exits non-zero", async ({ server, agent }) => {
    const missing = await run(["mcp"], bridgeEnv(server.url, null));
    expect(missing.code).toBe(2);
    expect(missing.stdout).toBe("");
    expect(missing.stderr).toMatch(/cairn mcp needs an agent: CAIRN_AGENT_ID with CAIRN_API_KEY or CAIRN_KEY_FILE/);
    const wrong = await run(["mcp"], bridgeEnv(server.url, { agentId: agent.agentId, apiKey: "cairn_not-the-key" }));
    expect(wrong.code).toBe(1);
    expect(wrong.stdout).toBe("");
    expect(wrong.stderr).toMatch(/refused the credentials of stdio-agent/);
    const remote = await run(["mcp"], bridgeEnv("http://192.0.2.1:9", agent));
    expect(remote.code).toBe(1);
    expect(remote.stderr).toMatch(/no Cairn server answers at http:\/\/192\.0\.2\.1:9/);
  });

  it("lists the tool set MCP_TOOLSET names in its own environment", async ({ server, agent, clients }) => {
    const core = await bridge(bridgeEnv(server.url, agent, { MCP_TOOLSET: "core" }));
    const all = await bridge(bridgeEnv(server.url, agent, { MCP_TOOLSET: "all" }));
    const standard = await bridge(bridgeEnv(server.url, agent));
    clients.push(core, all, standard);
    const names = async (client: Client) => (await client.listTools()).tools.map((tool) => tool.name);
    const [coreTools, allTools, standardTools] = [await names(core), await names(all), await names(standard)];
    expect(coreTools.length).toBeLessThanOrEqual(12);
    expect(coreTools).not.toContain("memory_get");
    expect(standardTools).toContain("memory_get");
    expect(allTools.length).toBeGreaterThan(standardTools.length);
    // Any tool may still be called, listed or not.
    expect((await callTool(core, "agent_me")).isError).toBe(false);
    const wrong = await run(["mcp"], bridgeEnv(server.url, agent, { MCP_TOOLSET: "everything" }));
    expect(wrong.code).toBe(2);
    expect(wrong.stderr).toMatch(/MCP_TOOLSET/);
  });

  // Forty bridge processes, each a Node start: a minute is too tight on a busy 2-core machine.
  it("exits when its standard input closes, ending its session on the server, so bridges never lock an agent out", { timeout: 150_000 }, async ({ server, clients }) => {
    const cycler = await server.agent("stdio-cycler");
    const env = bridgeEnv(server.url, cycler);
    const before = await openSessions(server);
    for (let cycle = 0; cycle < 40; cycle++) {
      const child = spawn(process.execPath, [CLI, "mcp"], { env, stdio: ["pipe", "pipe", "pipe"] });
      const exited = new Promise<number | null>((resolveExit) => child.on("exit", (code) => resolveExit(code)));
      let answered = "";
      const initialized = new Promise<void>((resolveInit) =>
        child.stdout.on("data", (chunk: Buffer) => {
          answered += chunk.toString("utf8");
          if (answered.includes('"id":1')) resolveInit();
        }),
      );
      child.stdin.write(
        `${JSON.stringify({ jsonrpc: "2.0", id: 1, method: "initialize", params: { protocolVersion: "2025-06-18", capabilities: {}, clientInfo: { name: "cycle", version: "1" } } })}\n`,
      );
      await initialized;
      // The host goes away: its end of the pipe closes, and the bridge must follow.
      child.stdin.end();
      expect(await exited).toBe(0);
    }
    expect(await openSessions(server)).toBe(before);
    const client = await bridge(env);
    clients.push(client);
    expect((await callTool<{ agent_id: string }>(client, "agent_me")).structured.agent_id).toBe("stdio-cycler");
  });
});

describe("cairn mcp without a running server", () => {
  const dataDir = tempDir("cairn-bridge-");
  let started: number | undefined;
  afterAll(() => {
    if (started !== undefined) {
      try {
        process.kill(started, "SIGKILL");
      } catch {
        // already gone
      }
    }
    rmSync(dataDir, { recursive: true, force: true });
  });

  it("starts one on the loopback address it was given, and a second bridge reuses it", async () => {
    const port = await freePort();
    const url = `http://127.0.0.1:${port}`;
    const serverEnv = testEnv(dataDir);
    delete serverEnv.PORT;
    delete serverEnv.HOST;
    // The agent exists before any server runs: `cairn agent add` works on the data directory.
    const key = /cairn_[A-Za-z0-9_-]+/.exec((await runCli(["agent", "add", "bridged"], { ...process.env, ...serverEnv })).stdout)?.[0] as string;
    const env = bridgeEnv(url, { agentId: "bridged", apiKey: key }, serverEnv);

    const firstLog: string[] = [];
    const first = await bridge(env, firstLog);
    const pid = /started cairn serve \(pid (\d+)\)/.exec(firstLog.join(""))?.[1];
    expect(pid).toBeDefined();
    started = Number(pid);
    const written = await callTool<{ id: string }>(first, "memory_write", { content: "kept by the auto-started server" });
    expect(written.isError).toBe(false);

    const secondLog: string[] = [];
    const second = await bridge(env, secondLog);
    expect(secondLog.join("")).not.toMatch(/started cairn serve/);
    const read = await callTool<{ content: string }>(second, "memory_get", { id: written.structured.id });
    expect(read.structured.content).toBe("kept by the auto-started server");
    await first.close();
    await second.close();
    // The server outlives the bridges: it belongs to the machine, not to one agent host.
    expect((await fetch(`${url}/health`)).status).toBe(200);
    // Its output went to a log, its pid to a file; status finds it and stop ends it.
    expect(readFileSync(join(dataDir, "logs", "server.log"), "utf8")).toMatch(new RegExp(`cairn http://127\\.0\\.0\\.1:${port}`));
    expect(readFileSync(join(dataDir, "server.pid"), "utf8")).toBe(`${started}\n`);
    expect(JSON.parse(readFileSync(join(dataDir, "server.json"), "utf8"))).toMatchObject({ pid: started, url });
    const control = { ...serverEnv, PATH: process.env.PATH ?? "/usr/bin:/bin", CAIRN_URL: url };
    const status = await run(["status"], control);
    expect(status.code).toBe(0);
    expect(status.stdout).toMatch(new RegExp(`cairn is running at ${url}`));
    expect(status.stdout).toMatch(new RegExp(`pid ${started}`));
    const stopped = await run(["stop"], control);
    expect(stopped.code).toBe(0);
    expect(stopped.stdout).toMatch(new RegExp(`stopped the cairn server \\(pid ${started}\\)`));
    await expect(fetch(`${url}/health`)).rejects.toThrow();
    expect(existsSync(join(dataDir, "server.pid"))).toBe(false);
    expect(existsSync(join(dataDir, "server.json"))).toBe(false);
    const after = await run(["status"], control);
    expect(after.code).toBe(1);
    expect(after.stdout).toMatch(/no cairn server answers/);
    expect((await run(["stop"], control)).stdout).toMatch(/no cairn server is running/);
  });
});

describe("cairn mcp when its server stops", () => {
  const dataDir = tempDir("cairn-bridge-restart-");
  afterAll(() => {
    try {
      process.kill(Number(readFileSync(join(dataDir, "server.pid"), "utf8")), "SIGKILL");
    } catch {
      // none left running
    }
    rmSync(dataDir, { recursive: true, force: true });
  });

  it("starts the loopback server again and opens a new session, so the host's session goes on", async () => {
    const port = await freePort();
    const url = `http://127.0.0.1:${port}`;
    const serverEnv = testEnv(dataDir);
    delete serverEnv.PORT;
    delete serverEnv.HOST;
    const key = /cairn_[A-Za-z0-9_-]+/.exec((await runCli(["agent", "add", "restarted"], { ...process.env, ...serverEnv })).stdout)?.[0] as string;
    const env = bridgeEnv(url, { agentId: "restarted", apiKey: key }, serverEnv);
    const log: string[] = [];
    const client = await bridge(env, log);
    try {
      const written = await callTool<{ id: string }>(client, "memory_write", { content: "outlives its server" });
      expect(written.isError).toBe(false);
      const control = { ...serverEnv, PATH: process.env.PATH ?? "/usr/bin:/bin", CAIRN_URL: url };
      expect((await run(["stop"], control)).code).toBe(0);
      await expect(fetch(`${url}/health`)).rejects.toThrow();

      // The same host session, a new server and a new session behind it.
      const read = await callTool<{ content: string }>(client, "memory_get", { id: written.structured.id });
      expect(read.isError).toBe(false);
      expect(read.structured.content).toBe("outlives its server");
      expect(log.join("").match(/started cairn serve/g)).toHaveLength(2);
      expect(log.join("")).toMatch(/no longer knew this bridge's session/);
      expect((await client.listTools()).tools.map((tool) => tool.name)).toContain("memory_write");
    } finally {
      await client.close();
    }
  });
});
