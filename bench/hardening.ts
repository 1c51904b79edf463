// Requests that could hold the event loop (issue 25, DESIGN §4a: none may hold it for more than
// ~100 ms of CPU), each sent once through the API to a real server process while a second client
// asks `/health` over and over: a blueprint whose output schema has an 8,000-object enum (saved,
// then a task of it completed twice with a 64 KiB output that breaks it), the largest contract the
// limits let through, a 255 KiB blueprint of 6,132 nodes, templates full of unclosed `{{`, and
// central and pulse after one write on a graph built through /compile. Per request: its status,
// wall time, the server's CPU (every thread) and its main thread's, and the longest /health wait.
// On SQLite the graph, once built, is kept in /tmp/cairn-bench-cache (building 150,000 entries
// through /compile takes the better part of an hour) and copied in by later runs.
import Database from "better-sqlite3";
import { createHash } from "node:crypto";
import { copyFileSync, existsSync, mkdirSync, readdirSync, readFileSync, renameSync } from "node:fs";
import { join } from "node:path";
import { setTimeout as sleep } from "node:timers/promises";
import { migrationsDir } from "../src/core/paths.js";
import { judge, newDataDir, progress, round, withServer, HttpClient, type Credentials, type Reply, type Row, type Section, type ServerProcess } from "./lib.js";
import { benchDatabaseUrl } from "./postgres.js";
import { threadCpuMs } from "./proc.js";
import { CACHE_DIR } from "./seed.js";

export interface StallOptions {
  /** Compiled entries of the graph, built 2,000 units per /compile request. */
  graphEntries: number;
  /** `depends_on` edges per entry (symbol deps resolved within a file). */
  edgesPerEntry: number;
}

interface Stall {
  scenario: string;
  status: number;
  wallMs: number;
  cpuMs: number;
  mainThreadCpuMs: number;
  /** The main thread's CPU less what answering the probes cost it (measured before the scenarios). */
  requestMainThreadCpuMs: number;
  healthMaxMs: number;
  healthProbes: number;
}

/** Main-thread CPU one /health costs the server, measured over many. */
let probeCpuMs = 0;

async function calibrateProbes(server: ServerProcess): Promise<void> {
  const prober = new HttpClient(server.url, 1);
  const probes = 400;
  const before = threadCpuMs(server.pid, server.pid);
  for (let index = 0; index < probes; index++) await prober.get("/health");
  probeCpuMs = (threadCpuMs(server.pid, server.pid) - before) / probes;
  prober.close();
}

const UNITS_PER_COMPILE = 2000;
const UNITS_PER_FILE = 50;
const OUTPUT_BYTES = 64 * 1024 - 64;

/**
 * Sends one request while a second connection asks /health every 5 ms, and measures what the
 * request cost the server and how long /health had to wait meanwhile.
 */
async function measure(server: ServerProcess, scenario: string, send: () => Promise<Reply>): Promise<Stall & { reply: Reply }> {
  const prober = new HttpClient(server.url, 1);
  await prober.get("/health");
  const waits: number[] = [];
  let running = true;
  const probing = (async () => {
    while (running) {
      const started = performance.now();
      await prober.get("/health");
      waits.push(performance.now() - started);
      await sleep(5);
    }
  })();
  const cpuBefore = server.cpuMs();
  const mainBefore = threadCpuMs(server.pid, server.pid);
  const started = performance.now();
  const reply = await send();
  const wallMs = performance.now() - started;
  const cpuMs = server.cpuMs() - cpuBefore;
  const mainThreadCpuMs = threadCpuMs(server.pid, server.pid) - mainBefore;
  running = false;
  await probing;
  prober.close();
  const requestMainThreadCpuMs = Math.max(0, Math.round(mainThreadCpuMs - waits.length * probeCpuMs));
  const stall = { scenario, status: reply.status, wallMs, cpuMs, mainThreadCpuMs, requestMainThreadCpuMs, healthMaxMs: Math.max(0, ...waits), healthProbes: waits.length };
  progress(`stalls: ${scenario}: ${reply.status}, ${round(wallMs)} ms, CPU ${cpuMs} ms (main thread ${requestMainThreadCpuMs}), /health waited ≤ ${round(stall.healthMaxMs)} ms`);
  return { ...stall, reply };
}

const rowOf = (stall: Stall): Row => ({
  scenario: stall.scenario,
  n: 1,
  p50Ms: round(stall.wallMs, 1),
  p95Ms: null,
  opsPerSec: null,
  cpuMsPerOp: stall.cpuMs,
  rssMb: null,
  note: `HTTP ${stall.status}; main thread ${stall.requestMainThreadCpuMs} ms CPU; /health waited ≤ ${round(stall.healthMaxMs)} ms (${stall.healthProbes} probes)`,
});

// ---- output contracts ----

/** What the review sent: an enum of 8,000 small objects. */
const enumSchema = (): Record<string, unknown> => ({
  type: "object",
  properties: { pick: { enum: Array.from({ length: 8000 }, (_, index) => ({ k: index, v: "x" })) } },
  required: ["pick"],
});

/** Values in a JSON value: itself and everything inside it, as the save-time bound counts them. */
function valuesIn(value: unknown): number {
  if (typeof value !== "object" || value === null) return 1;
  return 1 + (Array.isArray(value) ? value : Object.values(value)).reduce((sum: number, item) => sum + valuesIn(item), 0);
}

/**
 * The costliest schema the bounds accept (300 values: Ajv's compile grows with them): 59 string
 * properties, every one required, nothing else allowed.
 */
function limitSchema(): Record<string, unknown> {
  const properties: Record<string, unknown> = {};
  for (let index = 0; index < 59; index++) properties[`field${index}`] = { type: "string", minLength: 1, maxLength: 16 + index };
  const schema = { type: "object", properties, required: Object.keys(properties), additionalProperties: false };
  if (valuesIn(schema) !== 300) throw new Error(`the schema at the bounds holds ${valuesIn(schema)} values, not 300`);
  return schema;
}

/** A 64 KiB output that breaks a wide schema everywhere: thousands of unknown keys of the wrong type. */
function hostileOutput(): Record<string, unknown> {
  const output: Record<string, unknown> = { pick: { k: "no" } };
  let bytes = 20;
  for (let index = 0; bytes < OUTPUT_BYTES; index++) {
    output[`z${index.toString(36)}`] = 0;
    bytes += index.toString(36).length + 6;
  }
  return output;
}

async function contractScenarios(server: ServerProcess, agent: Credentials): Promise<Stall[]> {
  const stalls: Stall[] = [];
  for (const [name, schema] of [
    ["enum-8000", enumSchema()],
    ["contract-at-limits", limitSchema()],
  ] as const) {
    const document = { name, title: `Contract ${name}`, project: null, nodes: [{ id: "pick", title: "Pick one", output_schema: schema }] };
    const bytes = Buffer.byteLength(JSON.stringify(document));
    const saved = await measure(server, `save a blueprint: ${name} output schema (${Math.round(bytes / 1024)} KiB)`, () => server.client.post("/blueprints", document, agent));
    stalls.push(saved);
    if (saved.status !== 201) continue;
    const run = JSON.parse((await server.client.post(`/blueprints/${name}/instantiate`, { project: null, params: {} }, agent)).body) as { nodes: { task_id: string }[] };
    const task = run.nodes[0]?.task_id as string;
    await server.client.post(`/tasks/${task}/claim`, {}, agent);
    const output = hostileOutput();
    for (const attempt of ["first", "again"]) {
      stalls.push(await measure(server, `complete against ${name}, a 64 KiB output that breaks it (${attempt})`, () => server.client.post(`/tasks/${task}/complete`, { output }, agent)));
    }
    stalls.push(await measure(server, `complete against ${name}, an empty output (every problem listed)`, () => server.client.post(`/tasks/${task}/complete`, { output: {} }, agent)));
  }
  return stalls;
}

// ---- blueprint documents and templates ----

/** The review's document: 6,132 nodes in a chain, 255 KiB. */
function manyNodes(): Record<string, unknown> {
  const id = (index: number): string => `n${index.toString(36)}`;
  return { name: "many-nodes", title: "Many", project: null, nodes: Array.from({ length: 6132 }, (_, index) => ({ id: id(index), title: "t", needs: index === 0 ? [] : [id(index - 1)] })) };
}

/** As many nodes as fit in 256 KiB, each description 4,000 unclosed `{{`. */
function unclosedBraces(): Record<string, unknown> {
  const nodes = Array.from({ length: 31 }, (_, index) => ({ id: `b${index}`, title: `{{${"{{".repeat(90)}`, description: "{{".repeat(4000), needs: index === 0 ? [] : [`b${index - 1}`] }));
  return { name: "unclosed-braces", title: "Braces", project: null, nodes };
}

/** The largest document the limits accept: 100 nodes, each needing every earlier one and naming their outputs. */
function largestAccepted(): Record<string, unknown> {
  const nodes = Array.from({ length: 100 }, (_, index) => {
    const needs = Array.from({ length: index }, (_, earlier) => `s${earlier}`);
    const mentions = needs.slice(-40).map((need) => `{{nodes.${need}.output.note}}`).join(" ");
    return {
      id: `s${index}`,
      title: `Step ${index} of {{params.release}}`,
      description: `${mentions} ${"{{ ".repeat(300)}`.slice(0, 2000),
      needs,
      output_schema: { type: "object", properties: { note: { type: "string", maxLength: 200 } } },
    };
  });
  return { name: "largest", title: "Largest", project: null, params: [{ name: "release", type: "string", required: true }], nodes };
}

async function documentScenarios(server: ServerProcess, agent: Credentials): Promise<Stall[]> {
  const stalls: Stall[] = [];
  for (const document of [manyNodes(), unclosedBraces(), largestAccepted()]) {
    const bytes = Buffer.byteLength(JSON.stringify(document));
    const nodes = (document.nodes as unknown[]).length;
    const name = document.name as string;
    const saved = await measure(server, `save a blueprint: ${name}, ${nodes} nodes, ${Math.round(bytes / 1024)} KiB`, () => server.client.post("/blueprints", document, agent));
    stalls.push(saved);
    if (saved.status !== 201) continue;
    stalls.push(
      await measure(server, `instantiate ${name} (renders every node)`, () =>
        server.client.post(`/blueprints/${name}/instantiate`, { project: null, params: document.params === undefined ? {} : { release: "r1" } }, agent),
      ),
    );
  }
  return stalls;
}

// ---- the knowledge graph ----

/** One /compile request's units: files of 50 units, each depending on the next `edges` symbols of its file. */
function compileUnits(batch: number, edges: number): Record<string, unknown>[] {
  return Array.from({ length: UNITS_PER_COMPILE }, (_, index) => {
    const file = Math.floor(index / UNITS_PER_FILE);
    const symbol = index % UNITS_PER_FILE;
    const number = batch * UNITS_PER_COMPILE + index;
    return {
      path: `src/b${batch}/f${file}.ts`,
      symbol: `s${symbol}`,
      kind: "function",
      lang: "typescript",
      start_line: symbol * 10 + 1,
      end_line: symbol * 10 + 9,
      sha: number.toString(16).padStart(64, "0"),
      description: `function s${symbol} of f${file}, batch ${batch}`,
      deps: Array.from({ length: edges }, (_, step) => ({ kind: "symbol", name: `s${(symbol + step + 1) % UNITS_PER_FILE}` })),
    };
  });
}

/** Waits until every entry has its vector, so the measured requests do not share the CPU with embedding. */
async function embeddingsDrained(server: ServerProcess): Promise<void> {
  const owner = server.owner();
  for (;;) {
    const reply = await server.client.get("/metrics", owner);
    const waiting = Number(/^cairn_embedding_queue_entries (\d+)/m.exec(reply.body)?.[1] ?? "0");
    if (reply.status !== 200 || waiting === 0) return;
    progress(`stalls: ${waiting.toLocaleString("en")} entries still to embed`);
    await sleep(5000);
  }
}

const GRAPH_PROJECT = "stalls";

/** Where the built graph is kept: by its size and every SQLite migration, so a schema change builds it again. */
function graphCacheFile(options: StallOptions): string {
  const hash = createHash("sha256");
  const folder = join(migrationsDir, "sqlite");
  for (const name of readdirSync(folder).sort()) hash.update(name).update(readFileSync(join(folder, name)));
  return join(CACHE_DIR, `stalls-graph-${options.graphEntries}x${options.edgesPerEntry}-schema${hash.digest("hex").slice(0, 10)}.db`);
}

/** Builds the graph through /compile as one agent, in project `stalls`. */
async function buildGraph(server: ServerProcess, agent: Credentials, options: StallOptions): Promise<void> {
  const created = await server.client.post("/projects", { name: GRAPH_PROJECT }, agent);
  if (created.status !== 201) throw new Error(`POST /projects: ${created.status} ${created.body}`);
  const batches = Math.ceil(options.graphEntries / UNITS_PER_COMPILE);
  const started = performance.now();
  for (let batch = 0; batch < batches; batch++) {
    const reply = await server.client.post("/compile", { project: GRAPH_PROJECT, units: compileUnits(batch, options.edgesPerEntry) }, agent);
    if (reply.status !== 200 && reply.status !== 201) throw new Error(`POST /compile: ${reply.status} ${reply.body.slice(0, 300)}`);
    if (batch % 5 === 4) progress(`stalls: compiled ${((batch + 1) * UNITS_PER_COMPILE).toLocaleString("en")} of ${(batches * UNITS_PER_COMPILE).toLocaleString("en")} units`);
  }
  progress(`stalls: the graph took ${round((performance.now() - started) / 1000)} s to build through /compile`);
  await embeddingsDrained(server);
}

/** Keeps a copy of the server's database (SQLite's online backup: the server keeps running). */
async function keepGraph(server: ServerProcess, file: string): Promise<void> {
  mkdirSync(CACHE_DIR, { recursive: true });
  const source = new Database(join(server.dataDir, "cairn.db"), { readonly: true, fileMustExist: true });
  try {
    await source.backup(`${file}.partial`);
  } finally {
    source.close();
  }
  renameSync(`${file}.partial`, file);
}

async function graphScenarios(server: ServerProcess, agent: Credentials, options: StallOptions): Promise<Stall[]> {
  const size = `${options.graphEntries.toLocaleString("en")} entries / ${(options.graphEntries * options.edgesPerEntry).toLocaleString("en")} edges`;
  const write = async (index: number): Promise<void> => {
    const reply = await server.client.post("/memory", { content: `A note on the graph, number ${index}, ${Date.now()}`, project: GRAPH_PROJECT, scope: "project" }, agent);
    if (reply.status !== 201) throw new Error(`POST /memory: ${reply.status} ${reply.body}`);
  };
  const stalls: Stall[] = [];
  // The first ranking of a selection; then, as the review did, one write before each.
  stalls.push(await measure(server, `central, first ever, ${size}`, () => server.client.get(`/memory/central?project=${GRAPH_PROJECT}`, agent)));
  await write(1);
  stalls.push(await measure(server, `central after one write, ${size}`, () => server.client.get(`/memory/central?project=${GRAPH_PROJECT}`, agent)));
  stalls.push(await measure(server, `central again (cached), ${size}`, () => server.client.get(`/memory/central?project=${GRAPH_PROJECT}`, agent)));
  await write(2);
  stalls.push(await measure(server, `pulse after one write, ${size}`, () => server.client.get(`/pulse?project=${GRAPH_PROJECT}`, agent)));
  await write(3);
  stalls.push(await measure(server, `central, your projects and global, after one write, ${size}`, () => server.client.get("/memory/central", agent)));
  return stalls;
}

export async function runStallBench(options: StallOptions): Promise<Section> {
  // The hash embedder keeps a 150,000-entry build from spending minutes embedding; nothing measured here searches.
  // The review's graph is one agent's work in minutes, past the compile quotas and the entries a
  // project may hold (issue 25, item 4): those are lifted here, as an owner could, to measure it.
  const env = {
    EMBEDDING_MODEL: "hash",
    MAX_BODY_BYTES: String(2 * 1024 * 1024),
    COMPILE_UNITS_PER_HOUR: "0",
    COMPILE_BYTES_PER_HOUR: "0",
    EMBEDDING_BACKLOG_PER_AGENT: "0",
    MAX_ENTRIES_PER_PROJECT: "0",
  };
  const stalls: Stall[] = await withServer(
    newDataDir(),
    4,
    async (server) => {
      await server.waitForHealth((health) => health.embeddings === "ready");
      const agent = await server.client.registerAgent("bench-stalls");
      await calibrateProbes(server);
      progress(`stalls: one /health costs the server's main thread ${round(probeCpuMs, 2)} ms`);
      progress("stalls: output contracts");
      const found = await contractScenarios(server, agent);
      progress("stalls: blueprint documents and templates");
      return [...found, ...(await documentScenarios(server, agent))];
    },
    env,
  );
  const cache = benchDatabaseUrl() === undefined ? graphCacheFile(options) : null;
  const graphDir = newDataDir();
  if (cache !== null && existsSync(cache)) {
    progress(`stalls: the graph from ${cache}`);
    copyFileSync(cache, join(graphDir, "cairn.db"));
  }
  stalls.push(
    ...(await withServer(
      graphDir,
      4,
      async (server) => {
        await server.waitForHealth((health) => health.embeddings === "ready");
        const agent = await server.client.registerAgent(`bench-stalls-${process.pid}`);
        await calibrateProbes(server);
        if (cache !== null && existsSync(cache)) {
          const joined = await server.client.request("POST", `/projects/${GRAPH_PROJECT}/join`, { as: agent });
          if (joined.status !== 200) throw new Error(`POST /projects/${GRAPH_PROJECT}/join: ${joined.status} ${joined.body}`);
        } else {
          progress(`stalls: building a ${options.graphEntries.toLocaleString("en")}-entry graph through /compile`);
          await buildGraph(server, agent, options);
          if (cache !== null) await keepGraph(server, cache);
        }
        return graphScenarios(server, agent, options);
      },
      env,
    )),
  );
  const worstHealth = Math.max(...stalls.map((stall) => stall.healthMaxMs));
  const worstMain = Math.max(...stalls.map((stall) => stall.requestMainThreadCpuMs));
  return {
    name: "stalls",
    title:
      "Requests that could hold the event loop: one request each, /health asked every 5 ms meanwhile (p50 = the request's wall time; CPU = the server's, every thread; " +
      "main thread = that thread's CPU less the probes' share; CPU is counted in 10 ms ticks)",
    rows: stalls.map(rowOf),
    targets: [
      { what: "longest /health wait during any of them", goal: "≤ 100 ms", measured: `${round(worstHealth)} ms`, met: judge(worstHealth, (value) => value <= 100) },
      { what: "most main-thread CPU of any of them", goal: "≤ 100 ms", measured: `${worstMain} ms`, met: judge(worstMain, (value) => value <= 100) },
    ],
    details: { graph_entries: options.graphEntries, edges_per_entry: options.edgesPerEntry, probe_cpu_ms: round(probeCpuMs, 3), stalls, embedding_model: "hash" },
  };
}
