// Startup: spawn → first 200 from /health → embeddings "ready" (a server is ready when it can
// embed), the server's resident memory idle after start and once it has served searches over a
// large store, and the stdio bridge (`cairn mcp`): spawn → its answer to the host's initialize.
import { spawn } from "node:child_process";
import { join } from "node:path";
import { createInterface } from "node:readline";
import { setTimeout as sleep } from "node:timers/promises";
import { packageRoot } from "../src/core/paths.js";
import { queryStream } from "./corpus.js";
import {
  latencyStats,
  memoryNote,
  newDataDir,
  progress,
  round,
  runClients,
  withServer,
  type Row,
  type Section,
  type ServerProcess,
} from "./lib.js";
import { processMemory, type Memory } from "./proc.js";
import { installStore, seededStore } from "./seed.js";

export interface StartupOptions {
  runs: number;
  largeStore: number;
  searchesAfterLoad: number;
  idleMs: number;
  /** How long the first empty-store server then sits idle before its RSS is read again; 0 skips it. */
  settleMs: number;
}

interface StartSample {
  healthMs: number;
  readyMs: number;
  idle: Memory;
  /** The first empty-store start only: RSS read every SETTLE_STEP_MS while the server sits idle. */
  settling?: { afterReadyMs: number; rssMb: number }[];
  settled?: Memory;
  afterSearch?: Memory;
  /** The stdio bridge, the server already running: spawn → initialize answered, and the bridge's RSS then. */
  bridgeMs?: number[];
  bridge?: Memory;
  /** `node -e ""` spawned beside each bridge: the floor the bridge's start stands on, under the same load. */
  nodeMs?: number[];
}

/** Bridges started per server start: one sample is too few on a machine shared with other work. */
const BRIDGE_RUNS = 5;
const SETTLE_STEP_MS = 15_000;

/**
 * V8 grows a heap's young generation to 32 MB while a start allocates the server's long-lived
 * objects, and gives it back only once the process has been idle a while (its memory reducer,
 * typically within one to two minutes). RSS just after the start and after that wait are both
 * reported; what an idle server holds is the second.
 */
async function settle(server: ServerProcess, settleMs: number, readyAt: number): Promise<{ settling: { afterReadyMs: number; rssMb: number }[]; settled: Memory }> {
  const settling: { afterReadyMs: number; rssMb: number }[] = [];
  const until = readyAt + settleMs;
  while (performance.now() < until) {
    await sleep(Math.min(SETTLE_STEP_MS, until - performance.now()));
    settling.push({ afterReadyMs: Math.round(performance.now() - readyAt), rssMb: server.memory().rssMb });
  }
  return { settling, settled: server.memory() };
}

/** Spawn → exit of a node that does nothing. */
async function nodeStart(): Promise<number> {
  const spawned = performance.now();
  await new Promise((resolve) => spawn(process.execPath, ["-e", ""], { stdio: "ignore" }).once("exit", resolve));
  return performance.now() - spawned;
}

/** Spawns `cairn mcp` as a host does and times it to the answer of the host's first message, initialize. */
async function bridgeStart(server: ServerProcess, agentId: string): Promise<{ ms: number; memory: Memory }> {
  const agent = await server.client.registerAgent(agentId);
  const spawned = performance.now();
  const child = spawn(process.execPath, [join(packageRoot, "dist", "src", "cli.js"), "mcp"], {
    env: { PATH: process.env.PATH ?? "/usr/bin:/bin", HOME: server.dataDir, CAIRN_URL: server.url, CAIRN_AGENT_ID: agent.agentId, CAIRN_API_KEY: agent.apiKey },
    stdio: ["pipe", "pipe", "pipe"],
  });
  const exited = new Promise((resolve) => child.once("exit", resolve));
  const answered = new Promise<void>((resolve, reject) => {
    createInterface({ input: child.stdout }).once("line", (line) => (/"id":1\b/.test(line) ? resolve() : reject(new Error(`the bridge answered: ${line}`))));
    void exited.then(() => reject(new Error("the bridge exited before it answered initialize")));
  });
  const initialize = { jsonrpc: "2.0", id: 1, method: "initialize", params: { protocolVersion: "2025-06-18", capabilities: {}, clientInfo: { name: "bench", version: "1" } } };
  child.stdin.write(`${JSON.stringify(initialize)}\n`);
  await answered;
  const ms = performance.now() - spawned;
  const memory = processMemory(child.pid as number);
  child.stdin.end();
  await exited;
  return { ms, memory };
}

async function startOnce(entries: number, options: StartupOptions, searches: number, run = 0): Promise<StartSample> {
  const store = entries > 0 ? await seededStore(entries, progress) : null;
  const dataDir = newDataDir();
  if (store) await installStore(store, dataDir, progress);
  return withServer(dataDir, 1, async (server) => {
    const healthMs = await server.waitForHealth();
    const readyMs = await server.waitForHealth((health) => health.embeddings === "ready");
    const readyAt = performance.now();
    await sleep(options.idleMs);
    const idle = server.memory();
    if (entries === 0) {
      const bridgeMs: number[] = [];
      const nodeMs: number[] = [];
      let bridge: Memory | undefined;
      for (let index = 0; index < BRIDGE_RUNS; index++) {
        const started = await bridgeStart(server, `bench-bridge-${run}-${index}`);
        bridgeMs.push(started.ms);
        bridge ??= started.memory;
        nodeMs.push(await nodeStart());
      }
      const settled = run === 0 && options.settleMs > 0 ? await settle(server, options.settleMs, readyAt) : {};
      return { healthMs, readyMs, idle, bridgeMs, nodeMs, ...settled, ...(bridge ? { bridge } : {}) };
    }
    if (searches === 0) return { healthMs, readyMs, idle };
    const reader = await server.client.registerAgent("bench-reader");
    const next = queryStream(4001);
    await runClients(server, 1, searches, async () => {
      const reply = await server.client.get(`/memory/search?q=${encodeURIComponent(next())}&limit=10`, reader);
      if (reply.status !== 200) throw new Error(`GET /memory/search: ${reply.status} ${reply.body}`);
    });
    return { healthMs, readyMs, idle, afterSearch: server.memory() };
  });
}

function timingRow(scenario: string, samples: number[], memory: Memory | null): Row {
  const stats = latencyStats(samples);
  return {
    scenario,
    n: stats.n,
    p50Ms: round(stats.p50),
    p95Ms: round(stats.p95),
    opsPerSec: null,
    cpuMsPerOp: null,
    rssMb: memory?.rssMb ?? null,
    ...(memory ? { note: `idle: ${memoryNote(memory)}` } : {}),
  };
}

/** A row of memory alone, read once after `n` operations (or none). */
function memoryRow(scenario: string, n: number, memory: Memory | undefined, note: string): Row {
  return { scenario, n, p50Ms: null, p95Ms: null, opsPerSec: null, cpuMsPerOp: null, rssMb: memory?.rssMb ?? null, ...(memory ? { note } : {}) };
}

/** The sample with the median idle RSS. */
const medianIdle = (samples: StartSample[]): Memory | null =>
  [...samples].sort((a, b) => a.idle.rssMb - b.idle.rssMb)[Math.floor((samples.length - 1) / 2)]?.idle ?? null;

export async function runStartupBench(options: StartupOptions): Promise<Section> {
  const empty: StartSample[] = [];
  for (let run = 0; run < options.runs; run++) {
    progress(`startup: empty store, run ${run + 1}/${options.runs}`);
    empty.push(await startOnce(0, options, 0, run));
  }
  const large: StartSample[] = [];
  const size = options.largeStore.toLocaleString("en");
  for (let run = 0; run < options.runs; run++) {
    progress(`startup: ${size} entries, run ${run + 1}/${options.runs}`);
    large.push(await startOnce(options.largeStore, options, run === 0 ? options.searchesAfterLoad : 0));
  }
  const afterSearch = large[0]?.afterSearch;
  const settled = empty[0]?.settled;
  return {
    name: "startup",
    title: `Startup and memory — ${options.runs} starts per store; RSS = VmRSS of the server process`,
    rows: [
      timingRow("empty store: spawn → /health 200", empty.map((sample) => sample.healthMs), null),
      timingRow("empty store: spawn → embeddings ready", empty.map((sample) => sample.readyMs), medianIdle(empty)),
      {
        ...timingRow("stdio bridge: spawn → initialize answered", empty.flatMap((sample) => sample.bridgeMs ?? []), null),
        rssMb: [...empty.flatMap((sample) => (sample.bridge ? [sample.bridge.rssMb] : []))].sort((a, b) => a - b)[Math.floor((empty.length - 1) / 2)] ?? null,
        note: "the server already running; RSS: the bridge process",
      },
      ...(settled
        ? [
            memoryRow(
              `empty store: idle ${Math.round(options.settleMs / 60_000)} min after ready`,
              1,
              settled,
              `idle: ${memoryNote(settled)}; V8 gives back the young generation a start grew`,
            ),
          ]
        : []),
      { ...timingRow("node -e \"\": spawn → exit (beside each bridge)", empty.flatMap((sample) => sample.nodeMs ?? []), null), note: "the floor under the bridge's start, at the same load" },
      timingRow(`${size} entries: spawn → /health 200`, large.map((sample) => sample.healthMs), null),
      timingRow(`${size} entries: spawn → embeddings ready`, large.map((sample) => sample.readyMs), medianIdle(large)),
      memoryRow(`${size} entries: after ${options.searchesAfterLoad} searches`, options.searchesAfterLoad, afterSearch, afterSearch ? memoryNote(afterSearch) : ""),
    ],
    targets: [],
    details: {
      idle_rss_measured_after_ready_plus_ms: options.idleMs,
      settled_rss_measured_after_ready_plus_ms: options.settleMs,
      peak_rss_mb: {
        empty: Math.max(...empty.map((sample) => sample.idle.peakRssMb)),
        large: Math.max(...large.map((sample) => (sample.afterSearch ?? sample.idle).peakRssMb)),
      },
      samples: { empty, large },
    },
  };
}
