// Search while a large compile is being embedded (issue 25, item 4): the review's case, where two
// 2,000-unit compiles kept the embedding model busy for a minute and every agent's search waited
// behind them. One agent compiles; another searches, one query after another, from before the
// compiles until their backlog has drained. use-lite: the hash embedder is instant and would show
// nothing. Measured, never judged.
import { createHash } from "node:crypto";
import { setTimeout as sleep } from "node:timers/promises";
import { noteStream, queryStream } from "./corpus.js";
import { expectStatus, latencyStats, newDataDir, progress, round, runClients, withServer, type Credentials, type Row, type Section, type ServerProcess } from "./lib.js";

export interface BacklogOptions {
  /** Notes written before anything is measured, so searches have something to find. */
  notes: number;
  /** Searches on the idle server. */
  idleSearches: number;
  /** Compile requests, and units in each (the contract's most is 2,000). */
  compiles: number;
  unitsPerCompile: number;
  /** Longest the searches during the backlog go on for. */
  maxBacklogSeconds: number;
}

const PROJECT = "bench-backlog";
const QUERY_SEED = 2501;
const NOTE_SEED = 2502;
const UNIT_SEED = 2503;
/** How often the backlog is read from /metrics while the searches run. */
const POLL_MS = 250;

/** Units like `cairn compile` sends: a signature and a sentence or two, about 340 bytes of request per unit (the review's 680 KiB per 2,000). */
function compileUnits(batch: number, count: number, next: () => { content: string }): Record<string, unknown>[] {
  return Array.from({ length: count }, (_, index) => {
    const symbol = `handler${batch}x${index}`;
    const signature = `function ${symbol}(input: Request): Promise<void>`;
    return {
      path: `src/m${batch}-${Math.floor(index / 40)}.ts`,
      symbol,
      kind: "function",
      lang: "typescript",
      start_line: 1 + (index % 40) * 20,
      end_line: 18 + (index % 40) * 20,
      sha: createHash("sha256").update(`${batch}:${symbol}`).digest("hex"),
      description: `${signature}\n${next().content.split(" ").slice(0, 15).join(" ")}`,
      deps: [],
    };
  });
}

/** Entries stored without a vector (the server's `cairn_embedding_queue_entries`). */
async function backlog(server: ServerProcess, owner: Credentials): Promise<number> {
  const reply = expectStatus("GET /metrics", await server.client.get("/metrics", owner), 200);
  const line = /^cairn_embedding_queue_entries (\d+)/m.exec(reply.body);
  if (!line) throw new Error("/metrics has no cairn_embedding_queue_entries");
  return Number(line[1]);
}

export async function runBacklogBench(options: BacklogOptions): Promise<Section> {
  return withServer(newDataDir(), 4, async (server) => {
    await server.waitForHealth((health) => health.embeddings === "ready");
    const owner = server.owner();
    const compiler = await server.client.registerAgent("bench-compiler");
    const reader = await server.client.registerAgent("bench-reader");
    expectStatus("POST /projects", await server.client.post("/projects", { name: PROJECT }, compiler), 201);
    expectStatus("join", await server.client.request("POST", `/projects/${PROJECT}/join`, { as: reader }), 200);
    progress(`backlog: writing ${options.notes} notes`);
    const note = noteStream(NOTE_SEED);
    for (let index = 0; index < options.notes; index++) {
      const { content, tags } = note();
      expectStatus("POST /memory", await server.client.post("/memory", { content, tags, project: PROJECT }, reader), 201);
    }
    const query = queryStream(QUERY_SEED);
    const search = async (): Promise<void> => {
      expectStatus("GET /memory/search", await server.client.get(`/memory/search?q=${encodeURIComponent(query())}&limit=10&project=${PROJECT}`, reader), 200);
    };
    progress(`backlog: ${options.idleSearches} searches on the idle server`);
    await runClients(server, 1, 10, search);
    const idle = await runClients(server, 1, options.idleSearches, search);

    const units = noteStream(UNIT_SEED);
    const bodies = Array.from({ length: options.compiles }, (_, batch) => ({ project: PROJECT, units: compileUnits(batch, options.unitsPerCompile, units) }));
    const requestBytes = Buffer.byteLength(JSON.stringify(bodies[0]));
    progress(`backlog: ${options.compiles} compiles of ${options.unitsPerCompile} units (${Math.round(requestBytes / 1024)} KiB each), searching until they are embedded`);
    const compileMs: number[] = [];
    for (const body of bodies) {
      const started = performance.now();
      expectStatus("POST /compile", await server.client.post("/compile", body, compiler), 200);
      compileMs.push(performance.now() - started);
    }
    const backlogStarted = performance.now();
    const atStart = await backlog(server, owner);

    // Searches one after another; a poller notes when the backlog is gone. A search counts as
    // "during the backlog" when it started before that.
    let drainedAt: number | null = null;
    const deadline = backlogStarted + options.maxBacklogSeconds * 1000;
    const poller = (async () => {
      while (drainedAt === null && performance.now() < deadline) {
        if ((await backlog(server, owner)) === 0) drainedAt = performance.now();
        else await sleep(POLL_MS);
      }
    })();
    const during: number[] = [];
    const cpuBefore = server.cpuMs();
    while (drainedAt === null && performance.now() < deadline) {
      const started = performance.now();
      await search();
      if (drainedAt === null || started < drainedAt) during.push(performance.now() - started);
    }
    const cpuDuring = server.cpuMs() - cpuBefore;
    await poller;
    const drainSeconds = drainedAt === null ? null : round(((drainedAt as number) - backlogStarted) / 1000, 1);
    const left = drainedAt === null ? await backlog(server, owner) : 0;
    const stats = latencyStats(during);
    const idleStats = latencyStats(idle.latencies);
    const rows: Row[] = [
      {
        scenario: "search, idle server",
        n: idleStats.n,
        p50Ms: round(idleStats.p50, 1),
        p95Ms: round(idleStats.p95, 1),
        opsPerSec: round((idleStats.n * 1000) / idle.wallMs, 1),
        cpuMsPerOp: round(idle.serverCpuMs / idleStats.n, 2),
        rssMb: null,
      },
      {
        scenario: `search during a ${(options.compiles * options.unitsPerCompile).toLocaleString("en")}-unit compile backlog`,
        n: stats.n,
        p50Ms: round(stats.p50, 1),
        p95Ms: round(stats.p95, 1),
        opsPerSec: null,
        cpuMsPerOp: stats.n === 0 ? null : round(cpuDuring / stats.n, 2),
        rssMb: server.memory().rssMb,
        note: drainSeconds === null ? `${left} entries still unembedded after ${options.maxBacklogSeconds} s` : `backlog of ${atStart} drained in ${drainSeconds} s`,
      },
    ];
    return {
      name: "backlog",
      title: `Search while compiles are embedded — ${options.compiles} × ${options.unitsPerCompile} units, use-lite, sequential searches by another agent`,
      rows,
      targets: [],
      details: {
        notes: options.notes,
        request_kib: round(requestBytes / 1024, 0),
        compile_request_ms: compileMs.map((ms) => round(ms, 0)),
        backlog_at_start: atStart,
        drain_seconds: drainSeconds,
        searches_during: stats.n,
        search_during_max_ms: round(stats.max, 1),
      },
    };
  });
}
