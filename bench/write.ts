// POST /memory: writes/s and latency at 1, 8 and 16 clients, swept over store sizes (empty, 10,000
// and 100,000 entries), to show whether a write's cost grows with the store. Each scenario gets a
// fresh server and data directory, so one scenario's writes never inflate the next one's store.
import { noteStream, type Note } from "./corpus.js";
import { embeddingsAndIndexReady, judge, latencyStats, newDataDir, progress, registerMany, round, rowOf, runClients, withServer, type Credentials, type HttpClient, type Row, type Section, type ServerProcess } from "./lib.js";
import { threadsCpuMs } from "./proc.js";
import { annStore, installStore, seededStore } from "./seed.js";

export interface WriteOptions {
  writes: number;
  /** Store sizes swept, in entries; 0 is an empty store. */
  stores: number[];
  clientCounts: number[];
  agents: number;
  warmup: number;
}

interface WriteScenario {
  label: string;
  entries: number;
  clients: number;
  row: Row;
  p99Ms: number;
  statuses: Record<string, number>;
  threads: WriteThreads;
}

/** CPU a timed write cost the server's main thread and its busiest other thread (the embedding one). */
interface WriteThreads {
  mainMsPerWrite: number;
  embeddingMsPerWrite: number;
  /** Writes/s one embedding thread allows at that cost: the ceiling whatever else gets faster. */
  embeddingCeiling: number;
}

function threadsPerWrite(pid: number, before: Map<number, number>, after: Map<number, number>, writes: number): WriteThreads {
  const used = [...after].map(([tid, ms]) => [tid, ms - (before.get(tid) ?? 0)] as const);
  const main = used.find(([tid]) => tid === pid)?.[1] ?? 0;
  const busiest = Math.max(0, ...used.filter(([tid]) => tid !== pid).map(([, ms]) => ms));
  return {
    mainMsPerWrite: round(main / writes, 2),
    embeddingMsPerWrite: round(busiest / writes, 2),
    embeddingCeiling: busiest > 0 ? round((1000 * writes) / busiest, 0) : Number.NaN,
  };
}

const WRITE_STREAM = 2001;
/** The client count the throughput target is set at. */
const TARGET_CLIENTS = 8;
const TARGET_RATE = 300;
/**
 * The seeded entries are all global memory, and the default cap of a project is 100,000 entries: a
 * cap above the largest store keeps the writes going while still counting them against it.
 */
export const ROOMY = { MAX_ENTRIES_PER_PROJECT: "10000000" };

export const registerWriters = (server: Pick<ServerProcess, "client">, count: number): Promise<Credentials[]> => registerMany(server, "bench-writer", count);

/** One POST /memory of `note` as the write benchmark sends it, its status counted in `statuses`. */
export async function writeNote(client: HttpClient, writer: Credentials, note: Note, statuses: Record<string, number>): Promise<void> {
  const reply = await client.post("/memory", note.tags.length > 0 ? note : { content: note.content }, writer);
  statuses[reply.status] = (statuses[reply.status] ?? 0) + 1;
  if (reply.status >= 300) throw new Error(`POST /memory: ${reply.status} ${reply.body}`);
}

async function writeScenario(options: WriteOptions, entries: number, clients: number, stream: number): Promise<WriteScenario> {
  const store = entries > 0 ? await seededStore(entries, progress) : null;
  const dataDir = newDataDir();
  if (store) {
    await installStore(store, dataDir, progress);
    // A store above the HNSW threshold is timed as a server runs it once its index is saved (a
    // build of 100,000 entries takes its worker some 100 s, during which every write scans): the
    // index is built once here, cached with the store, and loaded by each server before timing.
    await (await annStore(store, dataDir, progress)).store.close();
  }
  const label = `${entries.toLocaleString("en")} entries, ${clients} client${clients === 1 ? "" : "s"}`;
  progress(`write: ${label}`);
  return withServer(dataDir, clients, async (server) => {
    await server.waitForHealth(embeddingsAndIndexReady);
    const writers = await registerWriters(server, options.agents);
    const next = noteStream(stream);
    const statuses: Record<string, number> = {};
    const write = async (index: number, client: number): Promise<void> => {
      // With several clients each sticks to one agent; a lone client takes turns as each of them.
      const writer = writers[(clients === 1 ? index : client) % writers.length] as Credentials;
      await writeNote(server.client, writer, next(), statuses);
    };
    await runClients(server, clients, options.warmup, write);
    for (const key of Object.keys(statuses)) delete statuses[key];
    const before = threadsCpuMs(server.pid);
    const run = await runClients(server, clients, options.writes, write);
    const threads = threadsPerWrite(server.pid, before, threadsCpuMs(server.pid), options.writes);
    const p99Ms = round(latencyStats(run.latencies).p99, 2);
    const duplicates = statuses["200"] ?? 0;
    const cpu = `main thread ${threads.mainMsPerWrite} + embedding ${threads.embeddingMsPerWrite} ms/write (≤ ${threads.embeddingCeiling}/s on one embedding thread)`;
    const note = [`p99 ${p99Ms} ms`, cpu, ...(duplicates > 0 ? [`${duplicates} duplicates (200)`] : [])].join(", ");
    return { label, entries, clients, row: rowOf(label, run, server.memory().rssMb, note), p99Ms, statuses, threads };
  }, ROOMY);
}

export async function runWriteBench(options: WriteOptions): Promise<Section> {
  const scenarios: WriteScenario[] = [];
  let stream = WRITE_STREAM;
  for (const entries of options.stores) {
    for (const clients of options.clientCounts) scenarios.push(await writeScenario(options, entries, clients, stream++));
  }
  const atTarget = scenarios.filter((scenario) => scenario.clients === TARGET_CLIENTS);
  const rates = atTarget.map((scenario) => scenario.row.opsPerSec ?? Number.NaN);
  const slowest = rates.length > 0 ? Math.min(...rates) : Number.NaN;
  const smallest = atTarget.at(0);
  const largest = atTarget.at(-1);
  const flatness = smallest && largest && smallest !== largest ? (largest.row.opsPerSec ?? Number.NaN) / (smallest.row.opsPerSec ?? Number.NaN) : Number.NaN;
  const sizes = options.stores.map((entries) => entries.toLocaleString("en")).join(", ");
  return {
    name: "write",
    title: `POST /memory — ${options.writes} timed writes per scenario by ${options.agents} agents, fresh server each, stores of ${sizes} entries`,
    rows: scenarios.map((scenario) => scenario.row),
    targets: [
      {
        what: `writes/s at ${TARGET_CLIENTS} clients, slowest store size (${sizes})`,
        goal: `≥ ${TARGET_RATE}/s`,
        measured: `${Number.isNaN(slowest) ? "?" : slowest}/s`,
        met: judge(slowest, (rate) => rate >= TARGET_RATE),
      },
      {
        what: `writes/s at ${TARGET_CLIENTS} clients, largest store over empty (flat with store size)`,
        goal: "≥ 0.9",
        measured: Number.isNaN(flatness) ? "?" : flatness.toFixed(2),
        met: judge(flatness, (ratio) => ratio >= 0.9),
      },
    ],
    details: {
      warmup_writes_per_scenario: options.warmup,
      p99_ms: Object.fromEntries(scenarios.map((scenario) => [scenario.label, scenario.p99Ms])),
      statuses: Object.fromEntries(scenarios.map((scenario) => [scenario.label, scenario.statuses])),
      threads: Object.fromEntries(scenarios.map((scenario) => [scenario.label, scenario.threads])),
    },
  };
}
