// Peers: the same workload through the reference memory server, mcp-memory-keeper and Cairn, each
// over its MCP stdio as an agent host runs it (Cairn through its stdio bridge to a server it
// started, and over REST too): start to ready and idle RSS, N short notes written one at a time,
// then searches; then concurrent writer processes, and how many acknowledged writes each system
// actually kept, read back afterwards. Every system keeps its data in a temp directory; nothing is
// downloaded at run time (the peers are pinned devDependencies).
import { spawn } from "node:child_process";
import { join } from "node:path";
import { createInterface } from "node:readline";
import { setTimeout as sleep } from "node:timers/promises";
import Database from "better-sqlite3";
import { packageRoot } from "../src/core/paths.js";
import { noteStream, queryStream } from "./corpus.js";
import {
  latencyStats,
  newDataDir,
  progress,
  registerMany,
  removeDataDir,
  round,
  startServerProcess,
  type Credentials,
  type Row,
  type Section,
  type ServerProcess,
} from "./lib.js";
import { processMemory, type Memory } from "./proc.js";
import { connect, referenceNames, SYSTEM_TITLES, SYSTEMS, type Connection, type SystemName, type Target } from "./peers-clients.js";

export interface PeersOptions {
  runs: number;
  notes: number;
  searches: number;
  writers: number;
  writesPerWriter: number;
  idleMs: number;
}

interface RunSample {
  /** Spawn → answers: a peer's `initialize`; Cairn's server with its embedding model loaded. */
  startMs: number;
  /** Cairn over MCP: the bridge's spawn → its `initialize` answered, the server already running. */
  bridgeMs?: number;
  idle: Memory;
  bridgeIdle?: Memory;
  writes: number[];
  searches: number[];
  semantic: number[];
}

interface ConcurrentSample {
  /** Distinct keys acknowledged: Cairn answers a duplicate with the entry it reinforced, so two writes can share one. */
  acked: number;
  /** Writes acknowledged. */
  acknowledged: number;
  failed: number;
  kept: number;
  wallMs: number;
  firstFailures: string[];
}

/** "kept/acknowledged", and how many acknowledged writes were duplicates merged into an entry another write made. */
const keptOfAcked = (sample: ConcurrentSample): string =>
  `${sample.kept}/${sample.acked}${sample.acknowledged > sample.acked ? ` (+${sample.acknowledged - sample.acked} merged as duplicates)` : ""}`;

const isCairn = (system: SystemName): boolean => system === "cairn-mcp" || system === "cairn-rest";

/** A peer's data path in `dir`: the reference server's JSON Lines file, memory-keeper's directory. */
const dataPathOf = (system: SystemName, dir: string): string => (system === "reference" ? join(dir, "memory.jsonl") : dir);

async function startCairn(dir: string): Promise<{ server: ServerProcess; readyMs: number }> {
  const server = await startServerProcess(dir, 16);
  const readyMs = await server.waitForHealth((health) => health.embeddings === "ready");
  return { server, readyMs };
}

async function timed(count: number, operation: (index: number) => Promise<void>): Promise<number[]> {
  const samples: number[] = [];
  for (let index = 0; index < count; index++) {
    const started = performance.now();
    await operation(index);
    samples.push(performance.now() - started);
  }
  return samples;
}

async function sequentialRun(system: SystemName, options: PeersOptions, run: number): Promise<RunSample> {
  const dir = newDataDir();
  let server: ServerProcess | null = null;
  let connection: Connection | null = null;
  try {
    let startMs: number;
    let bridgeMs: number | undefined;
    let target: Target;
    if (isCairn(system)) {
      const started = await startCairn(dir);
      server = started.server;
      startMs = started.readyMs;
      target = { system, url: server.url, agent: await server.client.registerAgent("peers-bench") };
      const spawned = performance.now();
      connection = await connect(target);
      if (system === "cairn-mcp") bridgeMs = performance.now() - spawned;
    } else {
      target = { system, dataPath: dataPathOf(system, dir) };
      const spawned = performance.now();
      connection = await connect(target);
      startMs = performance.now() - spawned;
    }
    await sleep(options.idleMs);
    const idle = server ? server.memory() : processMemory(connection.pid as number);
    const bridgeIdle = system === "cairn-mcp" ? processMemory(connection.pid as number) : undefined;
    const notes = noteStream(7000 + run);
    const open = connection;
    progress(`peers: ${system}, run ${run + 1}/${options.runs}: ${options.notes.toLocaleString("en")} writes`);
    const writes = await timed(options.notes, async (index) => void (await open.write(index, notes().content)));
    const queries = queryStream(7100 + run);
    const searches = await timed(options.searches, () => open.search(queries()));
    const semanticQueries = queryStream(7100 + run);
    const semantic = system === "keeper" ? await timed(options.searches, () => open.search(semanticQueries(), true)) : [];
    return { startMs, ...(bridgeMs === undefined ? {} : { bridgeMs }), idle, ...(bridgeIdle ? { bridgeIdle } : {}), writes, searches, semantic };
  } finally {
    await connection?.close();
    await server?.stop();
    await removeDataDir(dir);
  }
}

interface WriterReport {
  acked: string[];
  failures: number;
  firstFailures: string[];
}

/** Starts `count` writer processes on `targets`, lets them go together once all are connected, and collects what each acknowledged. */
async function runWriters(targets: Target[], writesPerWriter: number, seed: number): Promise<{ reports: WriterReport[]; wallMs: number }> {
  const writers = targets.map((target, index) => {
    const child = spawn(process.execPath, ["--import", "tsx", join(packageRoot, "bench", "peers-writer.ts"), JSON.stringify(target), String(writesPerWriter), String(seed + index)], {
      cwd: packageRoot,
      stdio: ["pipe", "pipe", "inherit"],
    });
    const lines = createInterface({ input: child.stdout });
    // A writer that cannot connect (its server or bridge refused or failed) is counted, not fatal:
    // its writes are all refused, and the others go on.
    const ready = new Promise<boolean>((resolve) => {
      lines.once("line", (line) => resolve(line === "ready"));
      child.once("exit", () => resolve(false));
    });
    const report = new Promise<WriterReport>((resolve) => {
      lines.on("line", (line) => {
        if (line.startsWith("{")) resolve(JSON.parse(line) as WriterReport);
      });
      child.once("exit", (code) => resolve({ acked: [], failures: writesPerWriter, firstFailures: [`the writer exited with ${code} before it reported`] }));
    });
    return { child, ready, report };
  });
  const connected = await Promise.all(writers.map((writer) => writer.ready));
  const started = performance.now();
  for (const [index, writer] of writers.entries()) if (connected[index]) writer.child.stdin.write("go\n");
  const reports = await Promise.all(writers.map((writer) => writer.report));
  return { reports, wallMs: performance.now() - started };
}

/** The acknowledged keys the system still has: read back through its own tools, or from its store. */
async function keptOf(system: SystemName, dir: string, acked: Set<string>, server: ServerProcess | null, agents: Credentials[]): Promise<number> {
  if (system === "reference") {
    const names = await referenceNames(dataPathOf(system, dir));
    return [...acked].filter((name) => names.has(name)).length;
  }
  if (system === "keeper") {
    // Its read tools are scoped to one session (each writer made its own) and paged: the store tells all.
    const db = new Database(join(dir, "context.db"), { readonly: true, fileMustExist: true });
    try {
      const keys = new Set((db.prepare("SELECT key FROM context_items").all() as { key: string }[]).map((row) => row.key));
      return [...acked].filter((key) => keys.has(key)).length;
    } finally {
      db.close();
    }
  }
  const found = new Set<string>();
  const owner = (server as ServerProcess).owner();
  for (const agent of agents) {
    for (let cursor: string | null = ""; cursor !== null; ) {
      const query: string = `/memory?agent=${encodeURIComponent(agent.agentId)}&limit=500${cursor ? `&cursor=${encodeURIComponent(cursor)}` : ""}`;
      const reply = await (server as ServerProcess).client.get(query, owner);
      if (reply.status !== 200) throw new Error(`GET /memory: ${reply.status} ${reply.body}`);
      for (const entry of JSON.parse(reply.body) as { id: string }[]) found.add(entry.id);
      const next = reply.headers["x-next-cursor"];
      cursor = typeof next === "string" && next !== "" ? next : null;
    }
  }
  return [...acked].filter((id) => found.has(id)).length;
}

async function concurrentRun(system: SystemName, options: PeersOptions, run: number): Promise<ConcurrentSample> {
  const dir = newDataDir();
  let server: ServerProcess | null = null;
  try {
    let targets: Target[];
    let agents: Credentials[] = [];
    if (isCairn(system)) {
      server = (await startCairn(dir)).server;
      agents = await registerMany(server, `peers-writer-${system}`, options.writers);
      const url = server.url;
      targets = agents.map((agent) => ({ system, url, agent }));
    } else {
      targets = Array.from({ length: options.writers }, () => ({ system, dataPath: dataPathOf(system, dir) }));
    }
    progress(`peers: ${system}, run ${run + 1}/${options.runs}: ${options.writers} writer processes × ${options.writesPerWriter} writes`);
    const { reports, wallMs } = await runWriters(targets, options.writesPerWriter, 8000 + run * 100);
    const acknowledged = reports.flatMap((report) => report.acked);
    const acked = new Set(acknowledged);
    const kept = await keptOf(system, dir, acked, server, agents);
    return {
      acked: acked.size,
      acknowledged: acknowledged.length,
      failed: reports.reduce((sum, report) => sum + report.failures, 0),
      kept,
      wallMs,
      firstFailures: reports.flatMap((report) => report.firstFailures).slice(0, 3),
    };
  } finally {
    await server?.stop();
    await removeDataDir(dir);
  }
}

const median = (values: number[]): number => [...values].sort((a, b) => a - b)[Math.floor((values.length - 1) / 2)] ?? Number.NaN;
const medianMemory = (samples: Memory[]): Memory | null => [...samples].sort((a, b) => a.rssMb - b.rssMb)[Math.floor((samples.length - 1) / 2)] ?? null;

interface SystemResult {
  system: SystemName;
  runs: RunSample[];
  concurrent: ConcurrentSample[];
}

function rowsOf(result: SystemResult, options: PeersOptions): Row[] {
  const { system, runs, concurrent } = result;
  const rows: Row[] = [];
  const latencyRow = (what: string, samples: number[], note?: string): Row => {
    const stats = latencyStats(samples);
    return {
      scenario: `${system}: ${what}`,
      n: stats.n,
      p50Ms: round(stats.p50, 2),
      p95Ms: round(stats.p95, 2),
      opsPerSec: round(1000 / stats.mean, 1),
      cpuMsPerOp: null,
      rssMb: null,
      ...(note === undefined ? {} : { note }),
    };
  };
  const idle = medianMemory(runs.map((sample) => sample.idle));
  rows.push({
    scenario: `${system}: ${isCairn(system) ? "server spawn → embeddings ready" : "spawn → initialize answered"}`,
    n: runs.length,
    p50Ms: round(median(runs.map((sample) => sample.startMs))),
    p95Ms: round(Math.max(...runs.map((sample) => sample.startMs))),
    opsPerSec: null,
    cpuMsPerOp: null,
    rssMb: idle?.rssMb ?? null,
    note: `idle RSS ${options.idleMs / 1000} s after ready (p95 column: slowest run)`,
  });
  const bridge = runs.flatMap((sample) => (sample.bridgeMs === undefined ? [] : [sample.bridgeMs]));
  if (bridge.length > 0) {
    const bridgeIdle = medianMemory(runs.flatMap((sample) => (sample.bridgeIdle ? [sample.bridgeIdle] : [])));
    rows.push({
      scenario: `${system}: bridge spawn → initialize answered`,
      n: bridge.length,
      p50Ms: round(median(bridge)),
      p95Ms: round(Math.max(...bridge)),
      opsPerSec: null,
      cpuMsPerOp: null,
      rssMb: bridgeIdle?.rssMb ?? null,
      note: "server already running; RSS: the bridge process",
    });
  }
  rows.push(latencyRow("write", runs.flatMap((sample) => sample.writes)));
  const searchKind = system === "reference" ? " (substring)" : system === "keeper" ? " (keyword)" : " (hybrid)";
  rows.push(latencyRow(`search${searchKind}`, runs.flatMap((sample) => sample.searches)));
  if (system === "keeper") rows.push(latencyRow("search (semantic)", runs.flatMap((sample) => sample.semantic)));
  const writesPerSecond = concurrent.map((sample) => (sample.acknowledged * 1000) / sample.wallMs);
  rows.push({
    scenario: `${system}: ${options.writers} writer processes`,
    n: options.writers * options.writesPerWriter,
    p50Ms: null,
    p95Ms: null,
    opsPerSec: round(median(writesPerSecond), 1),
    cpuMsPerOp: null,
    rssMb: null,
    note: `kept/acknowledged per run: ${concurrent.map(keptOfAcked).join(", ")}${concurrent.some((sample) => sample.failed > 0) ? `; refused: ${concurrent.map((sample) => sample.failed).join(", ")}` : ""}`,
  });
  return rows;
}

/** The three systems side by side, one line per measure, as the issue's table has them. */
function sideBySide(results: SystemResult[], options: PeersOptions): string {
  const by = (system: SystemName): SystemResult | undefined => results.find((result) => result.system === system);
  const p50 = (samples: number[]): string => `${latencyStats(samples).p50.toFixed(1)} / ${latencyStats(samples).p95.toFixed(1)}`;
  const cell = (system: SystemName, measure: (result: SystemResult) => string): string => {
    const result = by(system);
    return result ? measure(result) : "–";
  };
  const writes = (result: SystemResult): number[] => result.runs.flatMap((sample) => sample.writes);
  const searches = (result: SystemResult): number[] => result.runs.flatMap((sample) => sample.searches);
  const startCell = (result: SystemResult): string => {
    const start = median(result.runs.map((sample) => sample.startMs)).toFixed(0);
    const rss = medianMemory(result.runs.map((sample) => sample.idle))?.rssMb.toFixed(0) ?? "–";
    const bridge = result.runs.flatMap((sample) => (sample.bridgeMs === undefined ? [] : [sample.bridgeMs]));
    return `${start} ms / ${rss} MB${bridge.length > 0 ? `; bridge ${median(bridge).toFixed(0)} ms` : ""}`;
  };
  const concurrentCell = (result: SystemResult): string => {
    const rate = median(result.concurrent.map((sample) => (sample.acknowledged * 1000) / sample.wallMs)).toFixed(0);
    const kept = result.concurrent.map(keptOfAcked).join(", ");
    return `${rate}/s, kept ${kept}`;
  };
  const lines: string[][] = [
    ["", "reference memory server", "mcp-memory-keeper", "Cairn (MCP)", "Cairn (REST)"],
    ["write p50 / p95 ms", ...SYSTEMS.map((system) => cell(system, (result) => p50(writes(result))))],
    [
      "search p50 / p95 ms",
      cell("reference", (result) => `${p50(searches(result))} (substring)`),
      cell("keeper", (result) => `${p50(searches(result))} (keyword); ${p50(result.runs.flatMap((sample) => sample.semantic))} (semantic)`),
      cell("cairn-mcp", (result) => p50(searches(result))),
      cell("cairn-rest", (result) => p50(searches(result))),
    ],
    ["start to ready / idle RSS", ...SYSTEMS.map((system) => cell(system, startCell))],
    [`${options.writers} writer processes`, ...SYSTEMS.map((system) => cell(system, concurrentCell))],
  ];
  const widths = lines[0]?.map((_, column) => Math.max(...lines.map((line) => (line[column] ?? "").length))) ?? [];
  return lines.map((line) => line.map((value, column) => value.padEnd(widths[column] ?? 0)).join(" │ ").trimEnd()).join("\n");
}

export async function runPeersBench(options: PeersOptions): Promise<Section> {
  const results: SystemResult[] = [];
  for (const system of SYSTEMS) {
    const result: SystemResult = { system, runs: [], concurrent: [] };
    for (let run = 0; run < options.runs; run++) result.runs.push(await sequentialRun(system, options, run));
    for (let run = 0; run < options.runs; run++) result.concurrent.push(await concurrentRun(system, options, run));
    results.push(result);
    // Each system's numbers as soon as they are in, so a run that fails later still leaves them.
    for (const row of rowsOf(result, options)) progress(`  ${row.scenario}: p50 ${row.p50Ms ?? "–"} ms, p95 ${row.p95Ms ?? "–"} ms, ${row.opsPerSec ?? "–"}/s, RSS ${row.rssMb ?? "–"} MB ${row.note ?? ""}`);
  }
  const table = sideBySide(results, options);
  console.log(`### peers side by side (${options.runs} runs each; latencies pooled over the runs, start and RSS the median run)\n\n${table}\n`);
  return {
    name: "peers",
    title:
      `Peers — ${options.notes.toLocaleString("en")} short notes written one at a time, then ${options.searches} searches, through each system's MCP stdio ` +
      `(Cairn: its stdio bridge to a server it started, and REST); ${options.writers} writer processes × ${options.writesPerWriter}; ${options.runs} runs each`,
    rows: results.flatMap((result) => rowsOf(result, options)),
    targets: [],
    details: {
      systems: SYSTEM_TITLES,
      side_by_side: table.split("\n"),
      runs: Object.fromEntries(
        results.map((result) => [
          result.system,
          {
            start_ms: result.runs.map((sample) => round(sample.startMs)),
            bridge_ms: result.runs.flatMap((sample) => (sample.bridgeMs === undefined ? [] : [round(sample.bridgeMs)])),
            idle: result.runs.map((sample) => sample.idle),
            bridge_idle: result.runs.flatMap((sample) => (sample.bridgeIdle ? [sample.bridgeIdle] : [])),
            concurrent: result.concurrent,
          },
        ]),
      ),
    },
  };
}
