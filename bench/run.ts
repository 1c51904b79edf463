// `npm run bench [-- write|search|startup ...] [--quick]`: runs the benchmarks against a real
// server process on loopback, prints one table per benchmark and writes bench/results/latest.json.
// Benchmarks measure and report; they never assert.
import { existsSync } from "node:fs";
import { loadavg } from "node:os";
import { join } from "node:path";
import { packageRoot } from "../src/core/paths.js";
import { round, type Section } from "./lib.js";
import { environment, formatSection, writeJson } from "./report.js";
import { runSearchBench } from "./search.js";
import { runStartupBench } from "./startup.js";
import { runWriteBench } from "./write.js";

const BENCHMARKS = ["startup", "write", "search"] as const;
type Benchmark = (typeof BENCHMARKS)[number];

const usage = `usage: npm run bench [-- [write] [search] [startup] [--quick]]

  write     POST /memory at 1 and 16 clients, empty and seeded store
  search    GET /memory/search at 10,000 and 100,000 entries, sequential and 4 clients
  startup   spawn → /health 200 → embeddings ready, and RSS idle and after a 100,000-entry load
  --quick   smaller counts and stores, for a smoke run (targets are then not judged)

Seeded stores are cached in /tmp/cairn-bench-cache; results go to bench/results/latest.json.
BENCH_SERVER_NODE_ARGS="--cpu-prof --cpu-prof-dir=DIR" passes node flags to every server it starts.`;

/** Full and quick sizes. Quick keeps every code path but finishes in a minute or two. */
function plan(quick: boolean) {
  return {
    write: { writes: quick ? 200 : 2000, seededEntries: quick ? 2000 : 10_000, clientCounts: [1, 16], agents: 4, warmup: quick ? 16 : 48 },
    search: { stores: quick ? [2000, 5000] : [10_000, 100_000], queries: quick ? 50 : 300, concurrentClients: 4, agents: 4, warmup: quick ? 10 : 30 },
    startup: { runs: quick ? 1 : 3, largeStore: quick ? 5000 : 100_000, searchesAfterLoad: quick ? 50 : 200, idleMs: 2000 },
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
  const env = environment();
  console.log(`# Cairn benchmarks${parsed.quick ? " (quick)" : ""} — node ${env.node}, ${env.cpus} × ${env.cpu_model}, commit ${env.commit ?? "?"}`);
  console.log(`load average at start: ${env.load_average_at_start.join(" ")} (other work on the machine skews these numbers)\n`);
  const started = performance.now();
  const sections: Section[] = [];
  for (const name of parsed.selected) {
    const section =
      name === "write" ? await runWriteBench(sizes.write) : name === "search" ? await runSearchBench(sizes.search) : await runStartupBench(sizes.startup);
    section.details.load_average_after = loadavg().map((value) => round(value, 2));
    sections.push(section);
    console.log(`${formatSection(section)}\nload average after: ${loadavg().map((value) => value.toFixed(2)).join(" ")}\n`);
  }
  const minutes = round((performance.now() - started) / 60_000);
  const file = join(packageRoot, "bench", "results", "latest.json");
  writeJson(file, {
    generated_at: new Date().toISOString(),
    quick: parsed.quick,
    environment: { ...env, load_average_at_end: loadavg().map((value) => round(value, 2)) },
    server: "node dist/src/cli.js serve; EMBEDDING_MODEL=use-lite RATE_LIMIT_PER_MINUTE=0 LOG_LEVEL=warn ARCHIVIST=off, loopback",
    plan: Object.fromEntries(parsed.selected.map((name) => [name, sizes[name]])),
    minutes,
    sections,
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
