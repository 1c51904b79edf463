// Recall@10 of the vector index against exact search, on the seeded stores, on either backend:
// SQLite's bit-quantized scan re-ranked by exact cosine, PostgreSQL's HNSW with iterative scans.
// The exact answer is a brute-force cosine over every stored vector, in this process; the index's
// is `VectorIndex.nearest` through the store. Asked as a search asks it (`searchPool(10)`
// neighbours, of which the first 10 count), and asked for 10 alone.
import { join } from "node:path";
import { embedderLoaderFor } from "../src/embed/models.js";
import { searchPool } from "../src/services/memory-search.js";
import { openStore } from "../src/store/open.js";
import type { Store } from "../src/store/store.js";
import { annStore, CACHE_DIR, installStore, seededStore } from "./seed.js";
import { queryStream } from "./corpus.js";
import { latencyStats, newDataDir, progress, removeDataDir, round, type Row, type Section } from "./lib.js";
import { benchDatabaseUrl, databaseEnv } from "./postgres.js";

export interface RecallOptions {
  stores: number[];
  queries: number;
}

export const K = 10;
/** The HNSW's query-time ef values compared (BENCH_ANN_EFS, comma-separated). */
const ANN_EFS = (process.env.BENCH_ANN_EFS ?? "64,128,200").split(",").map(Number);
const QUERY_STREAM = 7001;
const PAGE = 2000;

/** The k nearest of `all` by exact cosine distance, ties by pk, as the index orders them. */
function exactNearest(all: Map<number, Float32Array>, query: Float32Array, k: number): number[] {
  let queryNorm = 0;
  for (const x of query) queryNorm += x * x;
  queryNorm = Math.sqrt(queryNorm);
  const best: { pk: number; distance: number }[] = [];
  for (const [pk, vector] of all) {
    let dot = 0;
    let norm = 0;
    for (let index = 0; index < vector.length; index++) {
      const x = vector[index] as number;
      dot += x * (query[index] as number);
      norm += x * x;
    }
    const distance = 1 - dot / (Math.sqrt(norm) * queryNorm);
    if (best.length < k || distance < (best[best.length - 1] as { distance: number }).distance) {
      best.push({ pk, distance });
      best.sort((a, b) => a.distance - b.distance || a.pk - b.pk);
      if (best.length > k) best.pop();
    }
  }
  return best.map((hit) => hit.pk);
}

/** Every stored vector of `store`, by row key. */
export async function loadVectors(store: Store): Promise<Map<number, Float32Array>> {
  const all = new Map<number, Float32Array>();
  for (let afterPk = 0; ; ) {
    const rows = await store.memory.notDeletedAfter(store.reader, afterPk, PAGE);
    const last = rows.at(-1);
    if (!last) break;
    for (const [pk, vector] of await store.vectors.get(store.reader, rows.map((row) => row.pk))) all.set(pk, vector);
    afterPk = last.pk;
  }
  return all;
}

export interface IndexRecall {
  /** Recall@K of the first K of `asked` neighbours. */
  recall: number;
  times: number[];
}

/** The index's nearest(`asked`) for each query: recall@K of its first K against exact search, and its times. */
export async function indexRecall(store: Store, all: Map<number, Float32Array>, vectors: Float32Array[], asked: number): Promise<IndexRecall> {
  // Every seeded entry is global, so any agent's viewpoint sees them all: the same set the exact search scans.
  const viewpoint = { agentId: "recall-bench", allProjects: false };
  let found = 0;
  const times: number[] = [];
  for (const vector of vectors) {
    const started = performance.now();
    const hits = await store.vectors.nearest(store.reader, vector, asked, { within: { viewpoint }, nowMs: Date.now() });
    times.push(performance.now() - started);
    const exact = new Set(exactNearest(all, vector, K));
    found += hits.slice(0, K).filter((hit) => exact.has(hit.pk)).length;
  }
  return { recall: found / (K * vectors.length), times };
}

const recallRow = (scenario: string, measured: IndexRecall, note: string): Row => {
  const stats = latencyStats(measured.times);
  return {
    scenario,
    n: measured.times.length,
    p50Ms: round(stats.p50),
    p95Ms: round(stats.p95),
    opsPerSec: null,
    cpuMsPerOp: null,
    rssMb: null,
    note: `recall@${K} ${round(measured.recall * 100)} % of the exact top ${K}; ${note}`,
  };
};

async function measureStore(entries: number, queries: string[], vectorsOf: (texts: string[]) => Promise<Float32Array[]>): Promise<Row[]> {
  const seeded = await seededStore(entries, progress);
  const dataDir = newDataDir();
  try {
    await installStore(seeded, dataDir, progress);
    // A/B in one run: the vec0 scan (no HNSW), then the HNSW index at each ef.
    const store = await openStore({ databaseUrl: databaseEnv(dataDir).DATABASE_URL, file: join(dataDir, "cairn.db") });
    const rows: Row[] = [];
    const size = entries.toLocaleString("en");
    const pool = searchPool(K);
    let all: Map<number, Float32Array>;
    let vectors: Float32Array[];
    try {
      progress(`recall: loading ${entries.toLocaleString("en")} vectors`);
      all = await loadVectors(store);
      vectors = await vectorsOf(queries);
      const note = `${all.size.toLocaleString("en")} vectors scanned exactly; times: the index's nearest() in-process`;
      rows.push(
        recallRow(`${size} entries, scan, k=${pool} as search asks, first ${K}`, await indexRecall(store, all, vectors, pool), note),
        recallRow(`${size} entries, scan, k=${K}`, await indexRecall(store, all, vectors, K), note),
      );
    } finally {
      await store.close();
    }
    if (benchDatabaseUrl()) return rows;
    for (const ef of ANN_EFS) {
      const { store: withAnn, annSeconds } = await annStore(seeded, dataDir, progress, { ef, threshold: 1 });
      try {
        if (annSeconds === null) break;
        const note = `HNSW ef ${ef}, ready in ${annSeconds} s after open`;
        rows.push(
          recallRow(`${size} entries, HNSW ef ${ef}, k=${pool} as search asks, first ${K}`, await indexRecall(withAnn, all, vectors, pool), note),
          recallRow(`${size} entries, HNSW ef ${ef}, k=${K}`, await indexRecall(withAnn, all, vectors, K), note),
        );
      } finally {
        await withAnn.close();
      }
    }
    return rows;
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
    for (const entries of options.stores) rows.push(...(await measureStore(entries, queries, (texts) => embedder.embed(texts))));
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
