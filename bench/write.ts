// POST /memory: latency and throughput at 1 and 16 clients, on an empty store and on a seeded one.
// Each scenario gets a fresh server and data directory, so one scenario's writes never inflate
// the next one's store.
import { noteStream, type Note } from "./corpus.js";
import { judge, newDataDir, progress, registerMany, rowOf, runClients, withServer, type Credentials, type HttpClient, type Row, type Section, type ServerProcess } from "./lib.js";
import { installStore, seededStore } from "./seed.js";

export interface WriteOptions {
  writes: number;
  seededEntries: number;
  clientCounts: number[];
  agents: number;
  warmup: number;
}

interface WriteScenario {
  label: string;
  entries: number;
  clients: number;
  row: Row;
  statuses: Record<string, number>;
}

const WRITE_STREAM = 2001;

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
  if (store) await installStore(store, dataDir, progress);
  const label = `${entries.toLocaleString("en")} entries, ${clients} client${clients === 1 ? "" : "s"}`;
  progress(`write: ${label}`);
  return withServer(dataDir, clients, async (server) => {
    await server.waitForHealth((health) => health.embeddings === "ready");
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
    const run = await runClients(server, clients, options.writes, write);
    const duplicates = statuses["200"] ?? 0;
    const note = duplicates > 0 ? `${duplicates} duplicates (200)` : undefined;
    return { label, entries, clients, row: rowOf(label, run, server.memory().rssMb, note), statuses };
  });
}

export async function runWriteBench(options: WriteOptions): Promise<Section> {
  const scenarios: WriteScenario[] = [];
  let stream = WRITE_STREAM;
  for (const entries of [0, options.seededEntries]) {
    for (const clients of options.clientCounts) scenarios.push(await writeScenario(options, entries, clients, stream++));
  }
  const seeded = scenarios.filter((scenario) => scenario.entries === options.seededEntries);
  const single = seeded.find((scenario) => scenario.clients === 1)?.row;
  const many = seeded.find((scenario) => scenario.clients === Math.max(...options.clientCounts))?.row;
  const atSize = options.seededEntries === 10_000 ? "" : ` (this run: ${options.seededEntries.toLocaleString("en")} entries)`;
  return {
    name: "write",
    title: `POST /memory — ${options.writes} timed writes per scenario by ${options.agents} agents, fresh server each`,
    rows: scenarios.map((scenario) => scenario.row),
    targets: [
      {
        what: `p50 at 10,000 entries, 1 client${atSize}`,
        goal: "≤ 20 ms",
        measured: `${single?.p50Ms ?? "?"} ms`,
        met: atSize ? null : judge(single?.p50Ms, (p50) => p50 <= 20),
      },
      {
        what: `writes/s at 10,000 entries, ${Math.max(...options.clientCounts)} clients${atSize}`,
        goal: "≥ 150/s",
        measured: `${many?.opsPerSec ?? "?"}/s`,
        met: atSize ? null : judge(many?.opsPerSec, (rate) => rate >= 150),
      },
    ],
    details: {
      warmup_writes_per_scenario: options.warmup,
      statuses: Object.fromEntries(scenarios.map((scenario) => [scenario.label, scenario.statuses])),
    },
  };
}
