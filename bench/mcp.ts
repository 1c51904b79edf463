// MCP against REST: the same operations through /mcp and through their REST routes, the size of
// `tools/list` for each tool set, and what a typical agent session puts in front of the model.
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import { join } from "node:path";
import { packageRoot } from "../src/core/paths.js";
import { noteStream, queryStream } from "./corpus.js";
import { latencyStats, newDataDir, progress, round, runClients, withServer, type Credentials, type Row, type Section, type ServerProcess } from "./lib.js";

export interface McpOptions {
  calls: number;
  warmup: number;
  /** Entries the team has written before the measured session. */
  sessionStore: number;
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

const tokensOf = (chars: number): number => Math.round(chars / 4);

interface SessionStep {
  step: string;
  chars: number;
  tokens: number;
}

interface SessionSize {
  steps: SessionStep[];
  chars: number;
  tokens: number;
  /** What the model writes: the arguments of its calls. */
  argumentChars: number;
  searchTokens: number[];
  /** How many hits each of those searches returned. */
  searchHits: number[];
  /** session_start of an agent that never started one: every recent change is new to it. */
  firstSessionStartTokens: number;
}

const posted = async (server: ServerProcess, path: string, body: unknown, as: Credentials): Promise<{ id: string }> => {
  const reply = await server.client.post(path, body, as);
  if (reply.status >= 300) throw new Error(`POST ${path}: ${reply.status} ${reply.body}`);
  return JSON.parse(reply.body) as { id: string };
};

/**
 * A team's store as a returning agent finds it: teammates' notes in a shared project (a fifth of
 * them global), the owner's directives and open tasks; since the agent's last session, a few new
 * notes, two messages and new tasks.
 */
async function seedTeam(server: ServerProcess, entries: number): Promise<{ agent: Credentials; teammate: Credentials }> {
  const owner = server.owner();
  const team: Credentials[] = [];
  for (const name of ["planner", "coder", "reviewer"]) team.push(await server.client.registerAgent(`bench-${name}`));
  const agent = await server.client.registerAgent("bench-session");
  await posted(server, "/projects", { name: "web" }, owner);
  for (const member of [...team, agent]) await posted(server, "/projects/web/join", {}, member);
  const notes = noteStream(5001);
  const write = (index: number, member: Credentials): Promise<{ id: string }> => {
    const note = notes();
    return posted(server, "/memory", { content: note.content, tags: note.tags, project: index % 5 === 4 ? null : "web" }, member);
  };
  progress(`mcp: seeding ${entries} notes for the session`);
  await runClients(server, 4, entries, async (index) => void (await write(index, team[index % team.length] as Credentials)));
  for (const content of [
    "Every change to the checkout flow needs a test for the failure path before review.",
    "Never log request bodies of the payment webhook handler: they carry card data.",
  ]) {
    await posted(server, "/memory", { content, type: "directive", project: "web" }, owner);
  }
  const priorities = ["low", "normal", "high"];
  const planner = team[0] as Credentials;
  for (let index = 0; index < 12; index++) {
    const note = notes();
    await posted(server, "/tasks", { title: note.content.split(/[.:;]/)[0]?.slice(0, 120), description: note.content, priority: priorities[index % 3], tags: note.tags, project: "web" }, planner);
  }
  // Earlier sessions: the agent has read every change so far (a pack holds at most 200), and handed off.
  for (let truncated = true; truncated; ) {
    const previous = await server.client.get("/sessions/handoff", agent);
    if (previous.status !== 200) throw new Error(`GET /sessions/handoff: ${previous.status}`);
    truncated = (JSON.parse(previous.body) as { delta_truncated: boolean }).delta_truncated;
  }
  await posted(
    server,
    "/sessions/handoff",
    { summary: "Looked into the flaky checkout total test; it depends on wall-clock time.", in_progress: [], next_steps: ["fix the checkout total test", "review the rate limiter change"] },
    agent,
  );
  for (let index = 0; index < 8; index++) await write(index, team[index % team.length] as Credentials);
  for (let index = 0; index < 3; index++) {
    const note = notes();
    await posted(server, "/tasks", { title: note.content.split(/[.:;]/)[0]?.slice(0, 120), description: note.content, priority: "normal", tags: note.tags, project: "web" }, planner);
  }
  await posted(server, "/messages", { to: agent.agentId, subject: "checkout test", body: "Can you take the flaky checkout total test today? The release is on Thursday." }, planner);
  await posted(server, "/messages", { to: "project:web", subject: "staging", body: "Staging is frozen from Wednesday noon until the release." }, team[1] as Credentials);
  return { agent, teammate: planner };
}

/**
 * A returning agent's session over MCP, as its host runs it: initialize, tools/list, then the
 * routine the instructions teach. Counts the characters of everything the model reads (the
 * instructions, the tool list, every result's text) and of what it writes (the arguments).
 */
async function measureSession(server: ServerProcess, agent: Credentials, teammate: Credentials): Promise<SessionSize> {
  const client = await connect(server, agent);
  const steps: SessionStep[] = [];
  let argumentChars = 0;
  const record = (step: string, chars: number): void => void steps.push({ step, chars, tokens: tokensOf(chars) });
  record("initialize (instructions)", (client.getInstructions() ?? "").length);
  const { tools } = await client.listTools();
  record(`tools/list (${tools.length} tools)`, JSON.stringify({ tools }).length);
  const call = async (name: string, args: Record<string, unknown>): Promise<Record<string, unknown>> => {
    argumentChars += JSON.stringify({ name, arguments: args }).length;
    const result = await client.callTool({ name, arguments: args });
    const text = (result.content as { type: string; text?: string }[]).map((part) => part.text ?? "").join("");
    if (result.isError) throw new Error(`${name}: ${text}`);
    record(name, text.length);
    return (result.structuredContent ?? {}) as Record<string, unknown>;
  };
  const queries = queryStream(5002);
  await call("session_start", {});
  const searchTokens: number[] = [];
  const searchHits: number[] = [];
  for (let index = 0; index < 2; index++) {
    const found = (await call("memory_search", { q: queries() })) as { result: unknown[] };
    searchTokens.push(steps.at(-1)?.tokens ?? 0);
    searchHits.push(found.result.length);
    const step = steps.at(-1);
    if (step) step.step = `memory_search (${found.result.length} hits)`;
  }
  await call("memory_write", { content: noteStream(5003)().content, tags: ["testing"] });
  const open = (await call("task_list", { status: "open" })) as { items: { id: string; blocked: boolean }[] };
  const task = open.items.find((item) => !item.blocked);
  if (!task) throw new Error("no open task to claim");
  await call("task_claim", { id: task.id });
  await call("task_complete", { id: task.id, output: { summary: "fixed; regression test added" } });
  await call("message_send", { to: teammate.agentId, body: "Took the task and finished it; the fix and its test are in." });
  await call("session_handoff", { summary: "Fixed the task I took; wrote down what I learned.", next_steps: ["review the rate limiter change"] });
  await client.close();

  const newcomer = await server.client.registerAgent("bench-newcomer");
  await posted(server, "/projects/web/join", {}, newcomer);
  const fresh = await connect(server, newcomer);
  const first = await fresh.callTool({ name: "session_start", arguments: { peek: true } });
  const firstChars = (first.content as { text?: string }[]).map((part) => part.text ?? "").join("").length;
  await fresh.close();

  const chars = steps.reduce((total, step) => total + step.chars, 0);
  return { steps, chars, tokens: tokensOf(chars), argumentChars, searchTokens, searchHits, firstSessionStartTokens: tokensOf(firstChars) };
}

/** Sequential calls (one client, as an agent host makes them), REST and MCP interleaved in blocks so drift hits both. */
export async function runMcpBench(options: McpOptions): Promise<Section> {
  const sizes: Record<string, { tools: number; chars: number; tokens: number }> = {};
  for (const toolset of ["core", "standard", "all"] as const) {
    await withServer(newDataDir(), 2, async (server) => {
      await server.waitForHealth();
      const client = await connect(server, server.owner());
      const { tools } = await client.listTools();
      const chars = JSON.stringify({ tools }).length;
      sizes[toolset] = { tools: tools.length, chars, tokens: tokensOf(chars) };
      await client.close();
    }, { MCP_TOOLSET: toolset });
  }

  const session = await withServer(newDataDir(), 4, async (server) => {
    await server.waitForHealth((health) => health.embeddings === "ready");
    const { agent, teammate } = await seedTeam(server, options.sessionStore);
    progress("mcp: a typical session");
    return measureSession(server, agent, teammate);
  });

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
    const sessionNote = (step: SessionStep): string => `${step.chars} chars ≈ ${step.tokens} tokens`;
    for (const step of session.steps) {
      rows.push({ scenario: `session: ${step.step}`, n: 1, p50Ms: null, p95Ms: null, opsPerSec: null, cpuMsPerOp: null, rssMb: null, note: sessionNote(step) });
    }
    rows.push({
      scenario: "session: everything the model reads",
      n: session.steps.length,
      p50Ms: null,
      p95Ms: null,
      opsPerSec: null,
      cpuMsPerOp: null,
      rssMb: null,
      note: `${session.chars} chars ≈ ${session.tokens} tokens (it writes ≈ ${tokensOf(session.argumentChars)})`,
    });
    rows.push({
      scenario: "session_start of a newcomer (not in the total)",
      n: 1,
      p50Ms: null,
      p95Ms: null,
      opsPerSec: null,
      cpuMsPerOp: null,
      rssMb: null,
      note: `≈ ${session.firstSessionStartTokens} tokens`,
    });
    const worst = Math.max(...Object.values(added));
    return {
      name: "mcp",
      title: `MCP vs REST — ${options.calls} sequential calls per operation and transport, one client`,
      rows,
      targets: [
        { what: "MCP overhead at p50 (worst operation)", goal: "≤ 3 ms", measured: `${worst} ms`, met: worst <= 3 },
        { what: "tools/list, core", goal: "≤ 2,000 tokens", measured: `${sizes.core?.tokens} tokens`, met: (sizes.core?.tokens ?? Infinity) <= 2000 },
        { what: "tools/list, standard", goal: "≤ 4,000 tokens", measured: `${sizes.standard?.tokens} tokens`, met: (sizes.standard?.tokens ?? Infinity) <= 4000 },
        {
          what: "a default search over MCP",
          goal: "≤ 500 tokens for 10 hits",
          measured: session.searchTokens.map((tokens, index) => `${tokens} tokens (${session.searchHits[index]} hits)`).join(", "),
          met: session.searchTokens.every((tokens) => tokens <= 500),
        },
      ],
      details: {
        toolsets: sizes,
        session: {
          store_entries: options.sessionStore,
          steps: session.steps,
          read_tokens: session.tokens,
          written_tokens: tokensOf(session.argumentChars),
          search_result_tokens: session.searchTokens,
          first_session_start_tokens: session.firstSessionStartTokens,
        },
        added_ms_p50: added,
        stdio_bridge_added_ms_p50: bridgeAdds,
      },
    };
  });
}
