// `npm run bench [-- write|search|startup|merge|pass ...] [--quick]`: runs the benchmarks against a real
// server process on loopback, prints one table per benchmark and writes bench/results/latest.json
// (latest-postgres.json when BENCH_DATABASE_URL puts the servers on PostgreSQL).
// Benchmarks measure and report; they never assert.
import { existsSync, readFileSync } from "node:fs";
import { loadavg } from "node:os";
import { join } from "node:path";
import { packageRoot } from "../src/core/paths.js";
import { runMergeBench, runPassBench } from "./archivist.js";
import { runAuthBench } from "./auth.js";
import { runBlueprintBench } from "./blueprints.js";
import { runCaptureBench } from "./captures.js";
import { runBacklogBench } from "./backlog.js";
import { runCompileBench } from "./compile.js";
import { runClaimBench, runHandoffBench, runMessageBench } from "./coordination.js";
import { runFanoutBench, runReplayBench } from "./events.js";
import { runFeedsInBench } from "./feeds-in.js";
import { runFeedsOutBench } from "./feeds-out.js";
import { runGraphBench } from "./graph.js";
import { runStallBench } from "./hardening.js";
import { runMcpBench } from "./mcp.js";
import { runMeshBench } from "./mesh.js";
import { runOAuthBench } from "./oauth.js";
import { runOutboundRefusalBench } from "./outbound-refusals.js";
import { runParaphraseBench } from "./paraphrase.js";
import { runPeersBench } from "./peers.js";
import { runRankingBench } from "./ranking.js";
import { runRecallBench } from "./recall.js";
import { runRetrievalBench } from "./retrieval.js";
import { runRedactionBench } from "./redaction.js";
import { progress, round, type Section } from "./lib.js";
import { benchDatabaseUrl, closeAdmin, dropStaleDatabases, serverVersion } from "./postgres.js";
import { environment, formatSection, writeJson } from "./report.js";
import { runScaleBench } from "./scale.js";
import { runSearchBench } from "./search.js";
import { runCurveBench } from "./search-curve.js";
import { runSeqlockBench } from "./seqlock.js";
import { runStartupBench } from "./startup.js";
import { runTransferBench } from "./transfer.js";
import { runUiBench } from "./ui.js";
import { runWriteBench } from "./write.js";
import { runLoadBench } from "./load.js";

const BENCHMARKS = ["startup", "write", "search", "claim", "messages", "handoff", "fanout", "replay", "mcp", "merge", "pass", "captures", "ui", "auth", "paraphrase", "ranking", "retrieval", "recall", "graph", "compile", "blueprints", "stalls", "redaction", "outbound-refusals", "feeds-in", "backlog", "scale", "seqlock", "feeds-out", "mesh", "oauth", "transfer", "load", "curve", "peers"] as const;
type Benchmark = (typeof BENCHMARKS)[number];

/** Benchmarks of what only PostgreSQL has: skipped, with the reason printed, on SQLite. */
const POSTGRES_ONLY: Partial<Record<Benchmark, string>> = {
  scale: "several servers share one store only on PostgreSQL",
  seqlock: "the events' advisory lock exists only on PostgreSQL",
};

const usage = `usage: npm run bench [-- [startup] [write] [search] [claim] [messages] [handoff] [fanout] [replay] [mcp] [merge] [pass] [captures] [ui] [auth] [paraphrase] [ranking] [retrieval] [recall] [graph] [compile] [blueprints] [stalls] [redaction] [outbound-refusals] [feeds-in] [backlog] [scale] [seqlock] [feeds-out] [mesh] [oauth] [transfer] [load] [curve] [peers] [--quick]]

  write     POST /memory at 1, 8 and 16 clients on an empty store and on 10,000 and 100,000 entries
  search    GET /memory/search at 10,000 and 100,000 entries: sequential, 4 clients, and sequential while 8 clients write
  startup   spawn → /health 200 → embeddings ready, and RSS idle and after a 100,000-entry load; the stdio bridge: spawn → initialize answered
  claim     task claims by 20 concurrent agents over 2,000 tasks, and a 20-way claim race
  messages  POST /messages and GET /messages/inbox, 50 agents, 10,000 messages in the store
  handoff   GET /sessions/handoff with 1,000 changed entries since the cursor
  fanout    50 SSE subscribers while tasks are written at 200/s for 30 s: delay from 201 to delivery; on PostgreSQL
            also 25/s written to one server with the subscribers on another
  replay    a stream resumed 100,000 events back: time until it has caught up
  mcp       the same operations through /mcp and REST, tools/list size per tool set, and the tokens of a typical session
  merge     archivist immediate mode: B's 201 → merged entry, 100 conflicting pairs (fake LLM, hash embedder)
  pass      archivist scheduled pass over 10,000 entries of the last day: duration, LLM calls, tokens
  captures  archivist capture digestion: 200 queued captures (captures/s, per capture), then 50 sent one at a time (201 → digested)
  ui        web UI time to interactive (Overview, Memory) with 10,000 entries and 2,000 tasks; asset sizes
  auth      wrong key vs unknown agent timing gap, guesses checked per id and address, RSS under junk client ids
  paraphrase  duplicate and similar thresholds on paraphrase pairs; search floor: off-topic results and recall@10 per SEARCH_MIN_SIMILARITY
  retrieval LoCoMo and Cranfield written and asked through the API: R@1/5/10, MRR, nDCG@10 for Cairn, plain BM25 and the vectors alone
  recall    the vector index's recall@10 against exact (brute-force) search at 10,000 and 100,000 entries
  ranking   the search-quality test's corpus: top-1, MRR and recall@10, hybrid and keyword-only (BM25 on SQLite, ts_rank_cd on PostgreSQL)
  graph     related (10,000 entries, 40,000 edges), central cold and cached and pulse cold and cached at 10,000/40,000 and 100,000/400,000
  compile   \`cairn compile --all\` over this repository against a fresh server: parse only, cold, and with nothing changed
  blueprints  instantiate a 100-node plan, complete run tasks with an output schema and a memory check, complete a 50-item fan-out's source
  stalls    requests that could hold the event loop (issue 25): an 8,000-object enum contract, a 6,132-node blueprint, unclosed {{,
            central and pulse after one write on a 150,000-entry / 750,000-edge graph built through /compile; /health asked meanwhile
  redaction the secret table and prose (caught, touched), and CPU per 64 KiB and 1 MiB of realistic and hostile text, in process
  outbound-refusals  every case of the outbound refusal table fetched under feeds against a loopback canary: refused at which step,
            connections the canary saw (none), and the rules per kind of address under every policy and setting
  feeds-in  100 feed subscriptions of 20 items each through the poller (use-lite): items/s; then a poll on request, with nothing
            new and with a 304: p50/p95 and server CPU
  backlog   search p50/p95 on an idle server, then while two 2,000-unit compiles are being embedded (use-lite), until the backlog drains
  scale     1, 2 and 3 servers on one PostgreSQL database: 20 agents claiming 2,000 tasks, and 3,000 writes by 16 clients (PostgreSQL only)
  seqlock   the events' advisory lock: event-writing transactions at concurrency 1, 4, 16 and 64, with and without it (PostgreSQL only)
  feeds-out GET /memory/feed.json and feed.atom pages of 500 walked through 100,000 entries, a 304 poll, and GET /memory/merkle
            cold (first after a start), cached, after one write and one bucket; the first start's stamping of every leaf
  mesh      two instances linked both ways, partitioned while each makes 10,000 changes: time, bytes and entries/s until their
            merkle roots match; an idle sync; a 100,000-entry initial sync (use-lite re-embeds), anti-entropy with nothing and one bucket differing
  oauth     an MCP SDK host from the server's URL to its first tool call (consent over HTTP included); POST /oauth/token p50/p95 for codes and refreshes
  transfer  moving a team: a 100,000-entry store (with edges, tasks, messages, handoffs) through cairn export, then cairn import
            --dry-run and cairn import into an empty server (hash embedder): time, file size, counts before and after, server RSS
  load      50 agents, 40 % search / 30 % write / 30 % tasks and messages, first offering 250 requests/s together (Poisson
            arrivals, latency from when each request was due), then with no think time: p50/p95/p99, req/s and errors per kind,
            then a check that nothing was lost; one server on SQLite, three on one database with BENCH_DATABASE_URL
  curve     search's cost curve: GET /memory/search p50/p95 and the vector index's recall@10 (asked as search asks) at 1,000, 10,000 and 100,000 entries
  peers     the reference memory server, mcp-memory-keeper and Cairn side by side, each through its MCP stdio (Cairn also over
            REST): 10,000 notes then 100 searches, start to ready and idle RSS, 16 writer processes and what each kept; 3 runs each
  --quick   smaller counts and stores, for a smoke run (targets are then not judged)

Seeded stores are cached in /tmp/cairn-bench-cache; results go to bench/results/latest.json,
where each benchmark run replaces its own section and keeps the others.
BENCH_SERVER_NODE_ARGS="--cpu-prof --cpu-prof-dir=DIR" passes node flags to every server it starts.
BENCH_SERVER_ENV='{"VECTOR_ANN_THRESHOLD":"5000"}' gives every server it starts those settings too.
BENCH_CURVE_STORES=100000 (comma-separated) runs only those points of the curve.
BENCH_WRITE_STORES=100000 and BENCH_WRITE_CLIENTS=8 (comma-separated) run only those write scenarios.
BENCH_SEARCH_STORES=100000 (comma-separated) runs the search benchmark on those stores only.
BENCH_KEEP_TEMPLATES=1 keeps PostgreSQL seed templates of another schema (branches sharing a server).

BENCH_DATABASE_URL=postgres://USER@HOST:PORT/DB (a superuser, or a role that may create databases)
runs every server on PostgreSQL: each gets a database of its own, cairn_bench_<pid>_<n>_<random>,
dropped when its run ends (and, if a run died, at the start of the next one). Seeded stores are
copied once from the cached SQLite file into a template database, cairn_seed_<cache key>, kept
across runs, and cloned per run. Results then go to bench/results/latest-postgres.json.`;

/** A comma-separated list of numbers from the environment (BENCH_CURVE_STORES=100000), e.g. to A/B one size; undefined when unset. */
const numbersFrom = (name: string): number[] | undefined => (process.env[name] ? process.env[name].split(",").map(Number) : undefined);
const curveStores = numbersFrom("BENCH_CURVE_STORES");
const writeStores = numbersFrom("BENCH_WRITE_STORES");
const writeClients = numbersFrom("BENCH_WRITE_CLIENTS");
const searchStores = numbersFrom("BENCH_SEARCH_STORES");

/** Full and quick sizes. Quick keeps every code path but finishes in a minute or two. */
function plan(quick: boolean) {
  return {
    write: {
      writes: quick ? 200 : 2000,
      stores: writeStores ?? (quick ? [0, 2000, 5000] : [0, 10_000, 100_000]),
      clientCounts: writeClients ?? [1, 8, 16],
      agents: 8,
      warmup: quick ? 16 : 48,
    },
    // A server's first few hundred searches run slower than the rest (V8 has not yet optimized the
    // hot paths; each PostgreSQL connection plans its statements for the first time): 300 warm-up
    // searches, then the timed ones, measure the server as it runs once it has been in use.
    search: { stores: searchStores ?? (quick ? [2000, 5000] : [10_000, 100_000]), queries: quick ? 50 : 300, concurrentClients: 4, agents: 4, warmup: quick ? 10 : 300 },
    startup: { runs: quick ? 1 : 3, largeStore: quick ? 5000 : 100_000, searchesAfterLoad: quick ? 50 : 200, idleMs: 2000, settleMs: quick ? 0 : 180_000 },
    claim: { agents: 20, tasks: quick ? 200 : 2000 },
    messages: { agents: 50, seeded: quick ? 1000 : 10_000, timed: quick ? 200 : 2000, concurrentClients: 50 },
    handoff: { changedEntries: quick ? 200 : 1000, loads: quick ? 20 : 100 },
    fanout: { subscribers: 50, writesPerSecond: 200, seconds: quick ? 5 : 30, acrossWritesPerSecond: 25 },
    replay: { events: quick ? 10_000 : 100_000 },
    mcp: { calls: quick ? 200 : 2000, warmup: quick ? 20 : 200, sessionStore: 300 },
    merge: { pairs: quick ? 20 : 100, warmup: quick ? 2 : 5, timeoutMs: 30_000 },
    pass: { entries: quick ? 2000 : 10_000, agents: 6, projects: 3, seedClients: 16 },
    "feeds-in": { feeds: quick ? 20 : 100, items: 20, polls: quick ? 50 : 300 },
    captures: { backlog: quick ? 40 : 200, live: quick ? 10 : 50, notesPerCapture: 8, facts: 3, timeoutMs: 30_000 },
    ui: { entries: quick ? 2000 : 10_000, tasks: quick ? 400 : 2000, runs: quick ? 3 : 7, seedClients: 16 },
    auth: { agents: quick ? 200 : 1000, pairs: quick ? 2000 : 10_000, junkIds: quick ? 5000 : 50_000, hugeIds: quick ? 200 : 2000 },
    paraphrase: { models: ["use-lite", "hash"] as const, storeEntries: quick ? 2000 : 10_000, queries: quick ? 40 : 150, floors: [0, 0.3, 0.35, 0.4, 0.45, 0.5, 0.55, 0.6] },
    // The corpus is the test's, small and fixed: the same either way.
    ranking: {},
    retrieval: quick ? { queries: 200 } : {},
    recall: { stores: quick ? [2000, 5000] : [10_000, 100_000], queries: quick ? 50 : 200 },
    graph: { stores: quick ? [2000, 5000] : [10_000, 100_000], edgesPerEntry: 4, relatedQueries: quick ? 50 : 300, coldRuns: quick ? 3 : 5, cachedRuns: quick ? 20 : 100 },
    // This repository, as it is: the same either way.
    compile: {},
    blueprints: { instantiations: quick ? 10 : 50, completions: quick ? 50 : 300, fanOuts: quick ? 5 : 30 },
    redaction: { sizes: quick ? [65_536] : [65_536, 1_048_576] },
    // The table is the test fixture's, small and fixed: the same either way.
    "outbound-refusals": {},
    stalls: { graphEntries: quick ? 20_000 : 150_000, edgesPerEntry: 5 },
    backlog: { notes: quick ? 100 : 300, idleSearches: quick ? 30 : 100, compiles: quick ? 1 : 2, unitsPerCompile: 2000, maxBacklogSeconds: quick ? 120 : 300 },
    scale: { serverCounts: [1, 2, 3], agents: 20, tasks: quick ? 200 : 2000, writeClients: 16, writes: quick ? 300 : 3000, writers: 4, warmup: quick ? 16 : 48 },
    seqlock: { concurrency: [1, 4, 16, 64], transactions: quick ? 500 : 5000, warmup: quick ? 50 : 200 },
    "feeds-out": { entries: quick ? 5000 : 100_000, polls: quick ? 20 : 100, coldRuns: quick ? 2 : 3, cachedRuns: quick ? 20 : 100 },
    mesh: {
      baseline: quick ? 400 : 4000,
      partition: quick ? { writes: 600, edits: 200, deletes: 200 } : { writes: 6000, edits: 2000, deletes: 2000 },
      idleSyncs: quick ? 20 : 50,
      entries: quick ? 5000 : 100_000,
      antiEntropyRuns: quick ? 5 : 10,
      repairs: quick ? 3 : 5,
    },
    oauth: { connections: quick ? 5 : 19, codes: quick ? 20 : 100, refreshes: quick ? 50 : 300 },
    load: { agents: 50, seconds: quick ? 8 : 30, warmupSeconds: quick ? 2 : 5, rate: 250, tasks: quick ? 2000 : 8000, postgresServers: 3 },
    curve: { stores: curveStores ?? (quick ? [1000, 5000] : [1000, 10_000, 100_000]), queries: quick ? 50 : 200, warmup: quick ? 10 : 300 },
    peers: { runs: quick ? 1 : 3, notes: quick ? 500 : 10_000, searches: quick ? 20 : 100, writers: quick ? 4 : 16, writesPerWriter: quick ? 50 : 300, idleMs: 2000 },
    transfer: { entries: quick ? 5000 : 100_000, projects: 4, edges: quick ? 1000 : 20_000, tasks: quick ? 200 : 2000, messages: quick ? 200 : 2000, handoffs: 100 },
  };
}

function parseArgs(args: string[]): { selected: Benchmark[]; quick: boolean } | null {
  const selected: Benchmark[] = [];
  let quick = false;
  for (const arg of args) {
    if (arg === "--quick") quick = true;
    else if ((BENCHMARKS as readonly string[]).includes(arg)) selected.push(arg as Benchmark);
    else return null;
  }
  return { selected: selected.length > 0 ? BENCHMARKS.filter((name) => selected.includes(name)) : [...BENCHMARKS], quick };
}

type Sizes = ReturnType<typeof plan>;

function run(name: Benchmark, sizes: Sizes): Promise<Section> {
  switch (name) {
    case "startup":
      return runStartupBench(sizes.startup);
    case "write":
      return runWriteBench(sizes.write);
    case "search":
      return runSearchBench(sizes.search);
    case "claim":
      return runClaimBench(sizes.claim);
    case "messages":
      return runMessageBench(sizes.messages);
    case "handoff":
      return runHandoffBench(sizes.handoff);
    case "fanout":
      return runFanoutBench(sizes.fanout);
    case "replay":
      return runReplayBench(sizes.replay);
    case "mcp":
      return runMcpBench(sizes.mcp);
    case "merge":
      return runMergeBench(sizes.merge);
    case "pass":
      return runPassBench(sizes.pass);
    case "blueprints":
      return runBlueprintBench(sizes.blueprints);
    case "captures":
      return runCaptureBench(sizes.captures);
    case "ui":
      return runUiBench(sizes.ui);
    case "auth":
      return runAuthBench(sizes.auth);
    case "paraphrase":
      return runParaphraseBench(sizes.paraphrase);
    case "ranking":
      return runRankingBench();
    case "retrieval":
      return runRetrievalBench(sizes.retrieval);
    case "recall":
      return runRecallBench(sizes.recall);
    case "graph":
      return runGraphBench(sizes.graph);
    case "compile":
      return runCompileBench();
    case "stalls":
      return runStallBench(sizes.stalls);
    case "redaction":
      return runRedactionBench(sizes.redaction);
    case "outbound-refusals":
      return runOutboundRefusalBench();
    case "feeds-in":
      return runFeedsInBench(sizes["feeds-in"]);
    case "backlog":
      return runBacklogBench(sizes.backlog);
    case "scale":
      return runScaleBench(sizes.scale);
    case "seqlock":
      return runSeqlockBench(sizes.seqlock);
    case "feeds-out":
      return runFeedsOutBench(sizes["feeds-out"]);
    case "mesh":
      return runMeshBench(sizes.mesh);
    case "oauth":
      return runOAuthBench(sizes.oauth);
    case "transfer":
      return runTransferBench(sizes.transfer);
    case "load":
      return runLoadBench(sizes.load);
    case "curve":
      return runCurveBench(sizes.curve);
    case "peers":
      return runPeersBench(sizes.peers);
  }
}

/** The sections and plan of the last results file, so running one benchmark keeps the others' numbers. */
function previousResults(file: string): { sections: Section[]; plan: Record<string, unknown> } {
  if (!existsSync(file)) return { sections: [], plan: {} };
  try {
    const parsed = JSON.parse(readFileSync(file, "utf8")) as { sections?: Section[]; plan?: Record<string, unknown> };
    return { sections: parsed.sections ?? [], plan: parsed.plan ?? {} };
  } catch {
    return { sections: [], plan: {} };
  }
}

async function main(): Promise<number> {
  const parsed = parseArgs(process.argv.slice(2));
  if (!parsed) {
    console.error(usage);
    return 2;
  }
  if (!existsSync(join(packageRoot, "dist", "src", "cli.js"))) {
    console.error("dist/ is missing: run `npm run build` (npm run bench does)");
    return 1;
  }
  const sizes = plan(parsed.quick);
  const onPostgres = benchDatabaseUrl() !== undefined;
  const env = { ...environment(), ...(onPostgres ? { postgres: await serverVersion() } : {}) };
  if (onPostgres) await dropStaleDatabases(progress);
  const backendNote = onPostgres ? `PostgreSQL ${env.postgres}` : "SQLite";
  console.log(`# Cairn benchmarks${parsed.quick ? " (quick)" : ""} — backend ${env.backend} (${backendNote}), node ${env.node}, ${env.cpus} × ${env.cpu_model}, commit ${env.commit ?? "?"}`);
  console.log(`load average at start: ${env.load_average_at_start.join(" ")} (other work on the machine skews these numbers)\n`);
  const started = performance.now();
  const sections: Section[] = [];
  const ran: Benchmark[] = [];
  for (const name of parsed.selected) {
    const postgresOnly = POSTGRES_ONLY[name];
    if (!onPostgres && postgresOnly !== undefined) {
      console.log(`## ${name} — skipped: needs BENCH_DATABASE_URL (${postgresOnly})\n`);
      continue;
    }
    ran.push(name);
    const section = await run(name, sizes);
    section.details.measured_at = new Date().toISOString();
    section.details.commit = env.commit;
    section.details.quick = parsed.quick;
    section.details.load_average_after = loadavg().map((value) => round(value, 2));
    sections.push(section);
    console.log(`${formatSection(section)}\nload average after: ${loadavg().map((value) => value.toFixed(2)).join(" ")}\n`);
  }
  const minutes = round((performance.now() - started) / 60_000);
  await closeAdmin();
  const file = join(packageRoot, "bench", "results", onPostgres ? "latest-postgres.json" : "latest.json");
  const earlier = previousResults(file);
  const kept = earlier.sections.filter((section) => !ran.includes(section.name as Benchmark));
  writeJson(file, {
    generated_at: new Date().toISOString(),
    environment: { ...env, load_average_at_end: loadavg().map((value) => round(value, 2)) },
    server:
      "node dist/src/cli.js serve; EMBEDDING_MODEL=use-lite RATE_LIMIT_PER_MINUTE=0 LOG_LEVEL=warn ARCHIVIST=off, loopback; " +
      "merge, pass and captures: EMBEDDING_MODEL=hash, with an in-process archivist and a fake LLM on loopback" +
      (onPostgres ? "; DATABASE_URL: a fresh database per server run on the BENCH_DATABASE_URL server (seeded ones cloned from a template)" : ""),
    plan: { ...earlier.plan, ...Object.fromEntries(ran.map((name) => [name, sizes[name]])) },
    sections: [...kept, ...sections].sort((a, b) => BENCHMARKS.indexOf(a.name as Benchmark) - BENCHMARKS.indexOf(b.name as Benchmark)),
  });
  console.log(`done in ${minutes} min; results in ${file}`);
  return 0;
}

main().then(
  (code) => process.exit(code),
  (error: unknown) => {
    console.error(error instanceof Error ? (error.stack ?? error.message) : error);
    process.exit(1);
  },
);
