// GET /memory/search on seeded stores: sequential and concurrent latency, plus the server's RSS
// once it has served the queries.
import { noteStream, queryStream } from "./corpus.js";
import {
  embeddingsAndIndexReady,
  judge,
  memoryNote,
  newDataDir,
  progress,
  rowOf,
  runClients,
  withServer,
  type Credentials,
  type Row,
  type Section,
  type ServerProcess,
} from "./lib.js";
import { installStore, seededStore, type SeededStore } from "./seed.js";
import { registerWriters, ROOMY, writeNote } from "./write.js";

export interface SearchOptions {
  stores: number[];
  queries: number;
  concurrentClients: number;
  agents: number;
  warmup: number;
}

interface Hit {
  match: "semantic" | "keyword" | "both";
}

interface StoreResult {
  entries: number;
  rows: Row[];
  readyMs: number;
  store: SeededStore;
  matches: Record<string, number>;
  keywordOnlyResponses: number;
}

const QUERY_STREAM = 3001;
/** Clients writing while the last scenario's searches are timed: searches must not queue behind writes. */
const WRITERS = 8;
const WRITE_STREAM = 4001;

/** Fails early when the server rebuilt the vector index instead of using the seeded one. */
async function checkSemanticHits(server: ServerProcess, reader: Credentials): Promise<void> {
  const reply = await server.client.get(`/memory/search?q=${encodeURIComponent("flaky test on staging")}&limit=10`, reader);
  const hits = JSON.parse(reply.body) as Hit[];
  if (reply.status !== 200 || reply.headers["x-search-mode"] === "keyword" || !hits.some((hit) => hit.match !== "keyword")) {
    throw new Error(`the seeded store returned no semantic hits (status ${reply.status}): is the vector index meta right?`);
  }
}

async function searchStore(options: SearchOptions, entries: number, stream: number): Promise<StoreResult> {
  const store = await seededStore(entries, progress);
  const dataDir = newDataDir();
  await installStore(store, dataDir, progress);
  const size = entries.toLocaleString("en");
  progress(`search: ${size} entries`);
  return withServer(dataDir, Math.max(options.concurrentClients, WRITERS + 1), async (server) => {
    const readyMs = await server.waitForHealth(embeddingsAndIndexReady);
    const readers: Credentials[] = [];
    for (let index = 1; index <= options.agents; index++) readers.push(await server.client.registerAgent(`bench-reader-${index}`));
    const firstReader = readers[0];
    if (!firstReader) throw new Error("no readers");
    await checkSemanticHits(server, firstReader);

    const matches: Record<string, number> = {};
    let keywordOnlyResponses = 0;
    const search = (next: () => string, clients: number) => async (index: number, client: number) => {
      const reader = readers[(clients === 1 ? index : client) % readers.length] ?? firstReader;
      const reply = await server.client.get(`/memory/search?q=${encodeURIComponent(next())}&limit=10`, reader);
      if (reply.status !== 200) throw new Error(`GET /memory/search: ${reply.status} ${reply.body}`);
      if (reply.headers["x-search-mode"] === "keyword") keywordOnlyResponses++;
      for (const hit of JSON.parse(reply.body) as Hit[]) matches[hit.match] = (matches[hit.match] ?? 0) + 1;
    };

    await runClients(server, 1, options.warmup, search(queryStream(stream + 500), 1));
    for (const key of Object.keys(matches)) delete matches[key];
    const sequential = await runClients(server, 1, options.queries, search(queryStream(stream), 1));
    const afterSequential = server.memory();
    const clients = options.concurrentClients;
    const concurrent = await runClients(server, clients, options.queries, search(queryStream(stream + 1), clients));
    const afterConcurrent = server.memory();
    const whileWriting = await searchWhileWriting(server, search(queryStream(stream + 2), 1), options.queries);
    const afterWrites = server.memory();
    return {
      entries,
      readyMs,
      store,
      matches,
      keywordOnlyResponses,
      rows: [
        rowOf(`${size} entries, sequential`, sequential, afterSequential.rssMb, memoryNote(afterSequential)),
        rowOf(`${size} entries, ${clients} clients`, concurrent, afterConcurrent.rssMb, memoryNote(afterConcurrent)),
        rowOf(
          `${size} entries, sequential, ${WRITERS} clients writing`,
          whileWriting.run,
          afterWrites.rssMb,
          `${whileWriting.writes} writes meanwhile (${whileWriting.writesPerSecond}/s); CPU per search counts them`,
        ),
      ],
    };
  }, ROOMY);
}

/** Times `total` searches in sequence while WRITERS clients write as fast as the server takes it. */
async function searchWhileWriting(server: ServerProcess, search: (index: number, client: number) => Promise<void>, total: number) {
  const writers = await registerWriters(server, WRITERS);
  const notes = noteStream(WRITE_STREAM);
  const statuses: Record<string, number> = {};
  let writing = true;
  let writes = 0;
  // A failed write stops the writers and fails the scenario once the searches end: rejected
  // unobserved, it would end the process before the server it started is stopped.
  const failures: unknown[] = [];
  const write = async (writer: Credentials): Promise<void> => {
    try {
      while (writing) {
        await writeNote(server.client, writer, notes(), statuses);
        writes += 1;
      }
    } catch (error) {
      failures.push(error);
      writing = false;
    }
  };
  const writeLoops = writers.map(write);
  const started = performance.now();
  let measured;
  try {
    const run = await runClients(server, 1, total, search);
    measured = { run, writes, writesPerSecond: Math.round((writes * 1000) / (performance.now() - started)) };
  } finally {
    writing = false;
    await Promise.all(writeLoops);
  }
  if (failures.length > 0) throw failures[0];
  return measured;
}

export async function runSearchBench(options: SearchOptions): Promise<Section> {
  const results: StoreResult[] = [];
  let stream = QUERY_STREAM;
  for (const entries of options.stores) {
    results.push(await searchStore(options, entries, stream));
    stream += 10;
  }
  const at10k = results.find((result) => result.entries === 10_000)?.rows[0];
  return {
    name: "search",
    title: `GET /memory/search?limit=10 — ${options.queries} varied queries per scenario by ${options.agents} agents, after ${options.warmup} searches to warm the server`,
    rows: results.flatMap((result) => result.rows),
    targets: [
      {
        what: "p50 at 10,000 entries, sequential",
        goal: "≤ 25 ms",
        measured: at10k ? `${at10k.p50Ms} ms` : "not run",
        met: judge(at10k?.p50Ms, (p50) => p50 <= 25),
      },
    ],
    details: Object.fromEntries(
      results.map((result) => [
        `${result.entries} entries`,
        {
          store_file: result.store.file,
          store_size_mb: result.store.sizeMb,
          seeded_this_run_seconds: result.store.builtSeconds ?? null,
          spawn_to_embeddings_ready_ms: Math.round(result.readyMs),
          hits_by_match: result.matches,
          keyword_only_responses: result.keywordOnlyResponses,
        },
      ]),
    ),
  };
}
