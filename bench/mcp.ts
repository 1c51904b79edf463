// MCP against REST: the same operations through /mcp and through their REST routes, and the size
// of `tools/list` for each tool set.
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import { join } from "node:path";
import { packageRoot } from "../src/core/paths.js";
import { latencyStats, newDataDir, progress, round, withServer, type Credentials, type Row, type Section, type ServerProcess } from "./lib.js";

export interface McpOptions {
  calls: number;
  warmup: number;
}

async function connect(server: ServerProcess, as: Credentials): Promise<Client> {
  const client = new Client({ name: "cairn-bench", version: "1.0.0" });
  await client.connect(
    new StreamableHTTPClientTransport(new URL("/mcp", server.url), { requestInit: { headers: { "X-Agent-ID": as.agentId, "X-API-Key": as.apiKey } } }),
  );
  return client;
}

async function timed(count: number, operation: (index: number) => Promise<void>, cpu?: { server: ServerProcess; total: number }): Promise<number[]> {
  const samples: number[] = [];
  const before = cpu?.server.cpuMs() ?? 0;
  for (let index = 0; index < count; index++) {
    const started = performance.now();
    await operation(index);
    samples.push(performance.now() - started);
  }
  if (cpu) cpu.total += cpu.server.cpuMs() - before;
  return samples;
}

const row = (scenario: string, samples: number[], serverCpuMs: number, note?: string): Row => {
  const stats = latencyStats(samples);
  return {
    scenario,
    n: stats.n,
    p50Ms: round(stats.p50, 2),
    p95Ms: round(stats.p95, 2),
    opsPerSec: round(1000 / stats.mean, 0),
    cpuMsPerOp: round(serverCpuMs / stats.n, 2),
    rssMb: null,
    ...(note === undefined ? {} : { note }),
  };
};

/** Sequential calls (one client, as an agent host makes them), REST and MCP interleaved in blocks so drift hits both. */
export async function runMcpBench(options: McpOptions): Promise<Section> {
  const sizes: Record<string, { tools: number; chars: number; tokens: number }> = {};
  for (const toolset of ["core", "standard", "all"] as const) {
    await withServer(newDataDir(), 2, async (server) => {
      await server.waitForHealth();
      const client = await connect(server, server.owner());
      const { tools } = await client.listTools();
      const chars = JSON.stringify({ tools }).length;
      sizes[toolset] = { tools: tools.length, chars, tokens: Math.round(chars / 4) };
      await client.close();
    }, { MCP_TOOLSET: toolset });
  }

  return withServer(newDataDir(), 4, async (server) => {
    await server.waitForHealth((health) => health.embeddings === "ready");
    const agent = await server.client.registerAgent("bench-mcp");
    const client = await connect(server, agent);
    const bridged = new Client({ name: "cairn-bench-stdio", version: "1.0.0" });
    await bridged.connect(
      new StdioClientTransport({
        command: process.execPath,
        args: [join(packageRoot, "dist", "src", "cli.js"), "mcp"],
        env: { PATH: process.env.PATH ?? "/usr/bin:/bin", CAIRN_URL: server.url, CAIRN_AGENT_ID: agent.agentId, CAIRN_API_KEY: agent.apiKey },
      }),
    );
    const task = JSON.parse((await server.client.post("/tasks", { title: "read me" }, agent)).body) as { id: string };
    const operations: { name: string; rest: () => Promise<void>; mcp: () => Promise<void> }[] = [
      {
        name: "task_get",
        rest: async () => void (await server.client.get(`/tasks/${task.id}`, agent)),
        mcp: async () => void (await client.callTool({ name: "task_get", arguments: { id: task.id } })),
      },
      {
        name: "message_inbox",
        rest: async () => void (await server.client.get("/messages/inbox", agent)),
        mcp: async () => void (await client.callTool({ name: "message_inbox", arguments: {} })),
      },
      {
        name: "task_create",
        rest: async () => void (await server.client.post("/tasks", { title: "bench task via REST" }, agent)),
        mcp: async () => void (await client.callTool({ name: "task_create", arguments: { title: "bench task via MCP" } })),
      },
    ];
    const rows: Row[] = [];
    const added: Record<string, number> = {};
    for (const operation of operations) {
      progress(`mcp: ${operation.name}`);
      await timed(options.warmup, operation.rest);
      await timed(options.warmup, operation.mcp);
      const rest: number[] = [];
      const mcp: number[] = [];
      const restCpu = { server, total: 0 };
      const mcpCpu = { server, total: 0 };
      for (let block = 0; block < 10; block++) {
        rest.push(...(await timed(options.calls / 10, operation.rest, restCpu)));
        mcp.push(...(await timed(options.calls / 10, operation.mcp, mcpCpu)));
      }
      const restRow = row(`${operation.name} via REST`, rest, restCpu.total);
      const mcpRow = row(`${operation.name} via /mcp`, mcp, mcpCpu.total);
      added[operation.name] = round((mcpRow.p50Ms ?? 0) - (restRow.p50Ms ?? 0), 2);
      mcpRow.note = `adds ${added[operation.name]} ms at p50`;
      rows.push(restRow, mcpRow);
    }
    progress("mcp: task_get through the stdio bridge");
    const viaMcp = async (): Promise<void> => void (await client.callTool({ name: "task_get", arguments: { id: task.id } }));
    const viaBridge = async (): Promise<void> => void (await bridged.callTool({ name: "task_get", arguments: { id: task.id } }));
    await timed(options.warmup, viaBridge);
    const direct: number[] = [];
    const bridgedSamples: number[] = [];
    for (let block = 0; block < 10; block++) {
      direct.push(...(await timed(options.calls / 10, viaMcp)));
      bridgedSamples.push(...(await timed(options.calls / 10, viaBridge)));
    }
    const directRow = row("task_get via /mcp (again)", direct, 0);
    const bridgeRow = row("task_get via cairn mcp (stdio → /mcp)", bridgedSamples, 0);
    const bridgeAdds = round((bridgeRow.p50Ms ?? 0) - (directRow.p50Ms ?? 0), 2);
    bridgeRow.note = `adds ${bridgeAdds} ms at p50 over /mcp`;
    directRow.cpuMsPerOp = null;
    bridgeRow.cpuMsPerOp = null;
    rows.push(directRow, bridgeRow);
    await bridged.close();
    await client.close();
    for (const [toolset, size] of Object.entries(sizes)) {
      rows.push({ scenario: `tools/list, ${toolset}`, n: size.tools, p50Ms: null, p95Ms: null, opsPerSec: null, cpuMsPerOp: null, rssMb: null, note: `${size.chars} chars ≈ ${size.tokens} tokens` });
    }
    const worst = Math.max(...Object.values(added));
    return {
      name: "mcp",
      title: `MCP vs REST — ${options.calls} sequential calls per operation and transport, one client`,
      rows,
      targets: [
        { what: "MCP overhead at p50 (worst operation)", goal: "≤ 3 ms", measured: `${worst} ms`, met: worst <= 3 },
        { what: "tools/list, standard", goal: "< 6,000 tokens", measured: `${sizes.standard?.tokens} tokens`, met: (sizes.standard?.tokens ?? Infinity) < 6000 },
      ],
      details: { toolsets: sizes, added_ms_p50: added, stdio_bridge_added_ms_p50: bridgeAdds },
    };
  });
}
