// The cost curve of search: at each store size, GET /memory/search?limit=10 (sequential, p50/p95)
// and the vector index's recall@10 against exact search, asked as search asks it (`searchPool(10)`
// neighbours, the first 10 counted). Stores are seeded through the store modules and cached
// (bench/seed.ts). 1,000,000 entries is a point of its own (BENCH_CURVE_STORES=1000000): its store
// takes most of an hour to seed on a 2-core machine, once.
import { embedderLoaderFor } from "../src/embed/models.js";
import { searchPool } from "../src/services/memory-search.js";
import { queryStream } from "./corpus.js";
import { embeddingsAndIndexReady, newDataDir, progress, round, runClients, rowOf, withServer, type Credentials, type Row, type Section } from "./lib.js";
import { databaseEnv, vectorIndexFit } from "./postgres.js";
import { K, indexRecall, loadVectors } from "./recall.js";
import { annStore, CACHE_DIR, installStore, seededStore } from "./seed.js";

export interface CurveOptions {
  stores: number[];
  queries: number;
  warmup: number;
}

const QUERY_STREAM = 5001;
// BENCH_VECTOR_ANN_THRESHOLD: the server's VECTOR_ANN_THRESHOLD, e.g. 1000000000 to time the scan alone (A/B).
// The recall is then measured with the same threshold.
const serverAnn: Record<string, string> = process.env.BENCH_VECTOR_ANN_THRESHOLD ? { VECTOR_ANN_THRESHOLD: process.env.BENCH_VECTOR_ANN_THRESHOLD } : {};
const recallAnn = process.env.BENCH_VECTOR_ANN_THRESHOLD ? { threshold: Number(process.env.BENCH_VECTOR_ANN_THRESHOLD) } : {};

interface Point {
  entries: number;
  http: Row;
  recall: number;
  nearestP50: number;
  /** PostgreSQL only: its buffer cache against the vector index's size. */
  fit?: { shared_buffers: string; vector_index_mb: number };
  /** Seconds until the HNSW index was ready in-process (built, or loaded from the cache); null: none. */
  annSeconds: number | null;
}

async function measure(entries: number, options: CurveOptions, vectorsOf: (texts: string[]) => Promise<Float32Array[]>): Promise<Point> {
  const size = entries.toLocaleString("en");
  const seeded = await seededStore(entries, progress);
  const dataDir = newDataDir();
  await installStore(seeded, dataDir, progress);
  const next = queryStream(QUERY_STREAM);
  const queries = Array.from({ length: options.queries }, () => next());
  progress(`curve: ${size} entries, recall`);
  const { store, annSeconds } = await annStore(seeded, dataDir, progress, recallAnn);
  const databaseUrl = databaseEnv(dataDir).DATABASE_URL;
  const fit = databaseUrl === undefined ? undefined : await vectorIndexFit(databaseUrl);
  let measured;
  try {
    measured = await indexRecall(store, await loadVectors(store), await vectorsOf(queries), searchPool(K));
  } finally {
    await store.close();
  }
  progress(`curve: ${size} entries, search`);
  const http = await withServer(dataDir, 2, async (server) => {
    // The server loads the HNSW index saved above before any search is timed.
    // A large store's index file is checked and read before the server reports it ready: a millisecond an entry is ample.
    await server.waitForHealth(embeddingsAndIndexReady, Math.max(180_000, entries));
    const reader: Credentials = await server.client.registerAgent("curve-reader");
    const search = (texts: () => string) => async () => {
      const reply = await server.client.get(`/memory/search?q=${encodeURIComponent(texts())}&limit=10`, reader);
      if (reply.status !== 200 || reply.headers["x-search-mode"] === "keyword") throw new Error(`GET /memory/search: ${reply.status} ${String(reply.headers["x-search-mode"] ?? "")}`);
    };
    const warm = queryStream(QUERY_STREAM + 500);
    await runClients(server, 1, options.warmup, search(warm));
    let index = 0;
    const run = await runClients(server, 1, options.queries, search(() => queries[index++ % queries.length] as string));
    return rowOf(`${size} entries`, run, server.memory().rssMb);
  }, serverAnn);
  const sorted = [...measured.times].sort((a, b) => a - b);
  return { entries, http, recall: measured.recall, nearestP50: sorted[Math.floor(sorted.length / 2)] ?? 0, annSeconds, ...(fit ? { fit } : {}) };
}

export async function runCurveBench(options: CurveOptions): Promise<Section> {
  const embedder = await embedderLoaderFor({ EMBEDDING_MODEL: "use-lite", DATA_DIR: CACHE_DIR })();
  const points: Point[] = [];
  try {
    for (const entries of options.stores) points.push(await measure(entries, options, (texts) => embedder.embed(texts)));
  } finally {
    await embedder.close();
  }
  const at100k = points.find((point) => point.entries === 100_000);
  return {
    name: "curve",
    title: `Search's cost curve — GET /memory/search?limit=10, ${options.queries} queries in sequence after ${options.warmup} to warm the server; recall@${K} of the vector index asked for ${searchPool(K)} as search asks`,
    rows: points.map((point) => ({
      ...point.http,
      note:
        `recall@${K} ${round(point.recall * 100)} % against exact search; the index's nearest(${searchPool(K)}) p50 ${round(point.nearestP50)} ms in-process; ` +
        (point.fit
          ? `pgvector's HNSW index ${point.fit.vector_index_mb} MB, shared_buffers ${point.fit.shared_buffers}`
          : point.annSeconds === null
            ? "no HNSW index (scan)"
            : `HNSW ready in ${point.annSeconds} s after open`),
    })),
    targets: [
      {
        what: "p50 at 100,000 entries",
        goal: "≤ 20 ms",
        measured: at100k ? `${at100k.http.p50Ms} ms` : "not run",
        met: at100k ? at100k.http.p50Ms !== null && at100k.http.p50Ms <= 20 : null,
      },
      {
        what: "recall@10 at 100,000 entries",
        goal: "≥ 95 %",
        measured: at100k ? `${round(at100k.recall * 100)} %` : "not run",
        met: at100k ? at100k.recall >= 0.95 : null,
      },
    ],
    details: points.some((point) => point.entries >= 1_000_000)
      ? {}
      : {
          one_million:
            "not in this run: BENCH_CURVE_STORES=1000000 adds it (its store is seeded once with real embeddings, ~45 minutes on a 2-core machine, and its HNSW index built once, then both are cached)",
        },
  };
}
