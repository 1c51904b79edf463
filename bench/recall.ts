// Recall@10 of the vector index against exact search, on the seeded stores, on either backend:
// SQLite's bit-quantized scan re-ranked by exact cosine, PostgreSQL's HNSW with iterative scans.
// The exact answer is a brute-force cosine over every stored vector, in this process; the index's
// is `VectorIndex.nearest` through the store, as a search's semantic half asks it.
import { join } from "node:path";
import { embedderLoaderFor } from "../src/embed/models.js";
import { openStore } from "../src/store/open.js";
import { CACHE_DIR, installStore, seededStore } from "./seed.js";
import { queryStream } from "./corpus.js";
import { latencyStats, newDataDir, progress, removeDataDir, round, type Row, type Section } from "./lib.js";
import { databaseEnv } from "./postgres.js";

export interface RecallOptions {
  stores: number[];
  queries: number;
}

const K = 10;
const QUERY_STREAM = 7001;
const PAGE = 2000;

function cosineDistance(a: Float32Array, b: Float32Array): number {
  let dot = 0;
  let na = 0;
  let nb = 0;
  for (let index = 0; index < a.length; index++) {
    const x = a[index] as number;
    const y = b[index] as number;
    dot += x * y;
    na += x * x;
    nb += y * y;
  }
  return 1 - dot / Math.sqrt(na * nb);
}

/** The k nearest by exact cosine distance, ties by pk, as the index orders them. */
function exactNearest(all: Map<number, Float32Array>, query: Float32Array, k: number): number[] {
  const best: { pk: number; distance: number }[] = [];
  for (const [pk, vector] of all) {
    const distance = cosineDistance(query, vector);
    if (best.length < k || distance < (best[best.length - 1] as { distance: number }).distance) {
      best.push({ pk, distance });
      best.sort((a, b) => a.distance - b.distance || a.pk - b.pk);
      if (best.length > k) best.pop();
    }
  }
  return best.map((hit) => hit.pk);
}

async function measureStore(entries: number, queries: string[], vectorsOf: (texts: string[]) => Promise<Float32Array[]>): Promise<Row> {
  const seeded = await seededStore(entries, progress);
  const dataDir = newDataDir();
  try {
    await installStore(seeded, dataDir, progress);
    const store = await openStore({ databaseUrl: databaseEnv(dataDir).DATABASE_URL, file: join(dataDir, "cairn.db") });
    try {
      progress(`recall: loading ${entries.toLocaleString("en")} vectors`);
      const all = new Map<number, Float32Array>();
      for (let afterPk = 0; ; ) {
        const rows = await store.memory.notDeletedAfter(store.reader, afterPk, PAGE);
        const last = rows.at(-1);
        if (!last) break;
        for (const [pk, vector] of await store.vectors.get(store.reader, rows.map((row) => row.pk))) all.set(pk, vector);
        afterPk = last.pk;
      }
      const vectors = await vectorsOf(queries);
      // Every seeded entry is global, so any agent's viewpoint sees them all: the same set the exact search scans.
      const viewpoint = { agentId: "recall-bench", allProjects: false };
      let found = 0;
      const times: number[] = [];
      for (const vector of vectors) {
        const started = performance.now();
        const hits = await store.vectors.nearest(store.reader, vector, K, { within: { viewpoint }, nowMs: Date.now() });
        times.push(performance.now() - started);
        const exact = new Set(exactNearest(all, vector, K));
        found += hits.filter((hit) => exact.has(hit.pk)).length;
      }
      const recall = found / (K * vectors.length);
      const stats = latencyStats(times);
      return {
        scenario: `${entries.toLocaleString("en")} entries, k=${K}`,
        n: vectors.length,
        p50Ms: round(stats.p50),
        p95Ms: round(stats.p95),
        opsPerSec: null,
        cpuMsPerOp: null,
        rssMb: null,
        note: `recall@${K} ${round(recall * 100)} % of the exact top ${K} (${all.size.toLocaleString("en")} vectors scanned exactly); times: the index's nearest() in-process`,
      };
    } finally {
      await store.close();
    }
  } finally {
    await removeDataDir(dataDir);
  }
}

export async function runRecallBench(options: RecallOptions): Promise<Section> {
  const next = queryStream(QUERY_STREAM);
  const queries = Array.from({ length: options.queries }, () => next());
  const embedder = await embedderLoaderFor({ EMBEDDING_MODEL: "use-lite", DATA_DIR: CACHE_DIR })();
  try {
    const rows: Row[] = [];
    for (const entries of options.stores) rows.push(await measureStore(entries, queries, (texts) => embedder.embed(texts)));
    return {
      name: "recall",
      title: `Vector index recall@${K} against exact search — ${options.queries} queries, use-lite`,
      rows,
      targets: [],
      details: {},
    };
  } finally {
    await embedder.close();
  }
}
