// The knowledge graph's reads (CONTRACT §14) on the seeded stores with four edges per entry:
// GET /memory/{id}/related, GET /memory/central cold (after a change) and cached, GET /pulse cold
// and cached, through a real server on loopback, on either backend.
import { join } from "node:path";
import { newId } from "../src/core/ids.js";
import { openStore } from "../src/store/open.js";
import type { EdgeRel } from "../src/wire/graph.js";
import { installStore, seededStore } from "./seed.js";
import { judge, latencyStats, newDataDir, progress, round, withServer, type Credentials, type Row, type Section, type ServerProcess } from "./lib.js";
import { databaseEnv } from "./postgres.js";

export interface GraphOptions {
  stores: number[];
  edgesPerEntry: number;
  relatedQueries: number;
  coldRuns: number;
  cachedRuns: number;
}

const PAGE = 5000;
const BATCH = 5000;
/** The mix of relations agents and the archivist record, roughly. */
const RELS: readonly EdgeRel[] = ["supports", "supports", "supports", "supports", "relates_to", "relates_to", "relates_to", "derived_from", "supersedes", "contradicts"];

/** A small deterministic generator, so every run draws the same graph. */
function generator(seed: number): () => number {
  let state = seed >>> 0;
  return () => {
    state = (state * 1664525 + 1013904223) >>> 0;
    return state / 2 ** 32;
  };
}

/** Adds `perEntry` random edges from every entry of the installed store; returns the entries' ids. */
async function addEdges(dataDir: string, perEntry: number): Promise<string[]> {
  const store = await openStore({ databaseUrl: databaseEnv(dataDir).DATABASE_URL, file: join(dataDir, "cairn.db") });
  try {
    const rows: { pk: number; id: string }[] = [];
    for (let afterPk = 0; ; ) {
      const page = await store.memory.notDeletedAfter(store.reader, afterPk, PAGE);
      const last = page.at(-1);
      if (!last) break;
      rows.push(...page.map((row) => ({ pk: row.pk, id: row.id })));
      afterPk = last.pk;
    }
    const random = generator(rows.length);
    const at = new Date().toISOString();
    const total = rows.length * perEntry;
    for (let start = 0; start < total; start += BATCH) {
      progress(`graph: edges ${start.toLocaleString("en")} of ${total.toLocaleString("en")}`);
      await store.transaction(async (tx) => {
        for (let index = start; index < Math.min(total, start + BATCH); index++) {
          const from = Math.floor(index / perEntry);
          let to = Math.floor(random() * rows.length);
          if (to === from) to = (to + 1) % rows.length;
          const src = rows[from] as { pk: number };
          const dst = rows[to] as { pk: number };
          const rel = RELS[Math.floor(random() * RELS.length)] as EdgeRel;
          await store.graph.upsert(tx, { id: newId(), srcPk: src.pk, dstPk: dst.pk, rel, note: null, project: null, agentId: "bench-graph", at });
        }
      });
    }
    return rows.map((row) => row.id);
  } finally {
    await store.close();
  }
}

async function timed(server: ServerProcess, path: string, as: Credentials): Promise<number> {
  const started = performance.now();
  const reply = await server.client.get(path, as);
  const elapsed = performance.now() - started;
  if (reply.status !== 200) throw new Error(`GET ${path}: ${reply.status} ${reply.body.slice(0, 300)}`);
  return elapsed;
}

function row(scenario: string, samples: number[], rssMb: number | null, note?: string): Row {
  const stats = latencyStats(samples);
  const wall = samples.reduce((sum, value) => sum + value, 0);
  return {
    scenario,
    n: stats.n,
    p50Ms: round(stats.p50, 2),
    p95Ms: round(stats.p95, 2),
    opsPerSec: wall > 0 ? round((stats.n * 1000) / wall, 1) : null,
    cpuMsPerOp: null,
    rssMb,
    ...(note === undefined ? {} : { note }),
  };
}

async function measureStore(options: GraphOptions, entries: number, related: boolean): Promise<Row[]> {
  const seeded = await seededStore(entries, progress);
  const dataDir = newDataDir();
  await installStore(seeded, dataDir, progress);
  const ids = await addEdges(dataDir, options.edgesPerEntry);
  const size = `${entries.toLocaleString("en")} entries / ${(entries * options.edgesPerEntry).toLocaleString("en")} edges`;
  return withServer(dataDir, 4, async (server) => {
    await server.waitForHealth((health) => health.embeddings === "ready");
    const reader = await server.client.registerAgent("bench-graph-reader");
    const rows: Row[] = [];
    const random = generator(entries + 7);
    const pick = (): string => ids[Math.floor(random() * ids.length)] as string;

    if (related) {
      progress(`graph: related at ${size}`);
      for (let index = 0; index < 10; index++) await timed(server, `/memory/${pick()}/related`, reader);
      const samples: number[] = [];
      for (let index = 0; index < options.relatedQueries; index++) samples.push(await timed(server, `/memory/${pick()}/related`, reader));
      rows.push(row(`related, ${size}`, samples, server.memory().rssMb, "hops 2, limit 10, with similar entries"));
    }

    // Cold: a new edge moves the selection's stamp before each run, so each computes the ranks again.
    progress(`graph: central at ${size}`);
    const cold: number[] = [];
    for (let run = 0; run < options.coldRuns; run++) {
      const linked = await server.client.post("/graph/edge", { src: pick(), dst: pick(), rel: "relates_to", note: `bench ${run}` }, reader);
      if (linked.status !== 201) throw new Error(`POST /graph/edge: ${linked.status} ${linked.body}`);
      cold.push(await timed(server, "/memory/central?limit=10", reader));
    }
    rows.push(row(`central cold, ${size}`, cold, server.memory().rssMb, "after a change: PageRank over the whole selection"));
    const cached: number[] = [];
    for (let run = 0; run < options.cachedRuns; run++) cached.push(await timed(server, "/memory/central?limit=10", reader));
    rows.push(row(`central cached, ${size}`, cached, server.memory().rssMb));

    // Pulse: its first call after a change computes the central ranks too; then 30 s of cached answers.
    progress(`graph: pulse at ${size}`);
    const linked = await server.client.post("/graph/edge", { src: pick(), dst: pick(), rel: "supports" }, reader);
    if (linked.status !== 201) throw new Error(`POST /graph/edge: ${linked.status} ${linked.body}`);
    const pulseCold = [await timed(server, "/pulse", server.owner())];
    rows.push(row(`pulse cold, ${size}`, pulseCold, server.memory().rssMb, "one sample: the first after a change, central computed within"));
    const pulseCached: number[] = [];
    for (let run = 0; run < options.cachedRuns; run++) pulseCached.push(await timed(server, "/pulse", server.owner()));
    rows.push(row(`pulse cached, ${size}`, pulseCached, server.memory().rssMb));
    return rows;
  });
}

export async function runGraphBench(options: GraphOptions): Promise<Section> {
  const rows: Row[] = [];
  for (const [index, entries] of options.stores.entries()) rows.push(...(await measureStore(options, entries, index === 0)));
  const find = (prefix: string): Row | undefined => rows.find((candidate) => candidate.scenario.startsWith(prefix));
  const related = find("related");
  return {
    name: "graph",
    title: `The knowledge graph: related (${options.relatedQueries} random seeds), central (${options.coldRuns} cold after a change, ${options.cachedRuns} cached), pulse`,
    rows,
    targets: [
      { what: "related p95 at the first store", goal: "≤ 50 ms", measured: related ? `${related.p95Ms} ms` : "not run", met: judge(related?.p95Ms, (p95) => p95 <= 50) },
    ],
    details: { edges_per_entry: options.edgesPerEntry, rels: RELS },
  };
}
