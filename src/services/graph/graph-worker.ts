import { parentPort } from "node:worker_threads";
import type { AgentActivityRow, ConflictEdge, GraphSelection, HotEntry, PulseCounts, TagAffinityRow } from "../../store/knowledge.js";
import { openReadOnlyStore, type StoreSource } from "../../store/open.js";
import type { Store } from "../../store/store.js";
import { MAX_RANKED_EDGES, MAX_RANKED_ENTRIES, rankSelection, type KeepSizes, type SelectionRanking } from "./rank-selection.js";

// The knowledge graph's heavy reads (CONTRACT §14, issue 25), on a thread of their own: ranking a
// selection reads every entry and edge of it (150,000 and 750,000 held the server's thread for
// two seconds), and pulse's counts and aggregates scan as much. Here they read through a read-only
// store of this thread's own (SQLite answers synchronously, so on the server's connection a scan
// is a stall) and send back only what central and pulse show.

export interface AggregateLimits {
  hot: number;
  conflicts: number;
  agents: number;
  tagRows: number;
}

export type GraphJob =
  | { kind: "rank"; selection: GraphSelection; nowIso: string; keep: KeepSizes }
  | { kind: "aggregates"; selection: GraphSelection; nowIso: string; dayAgoIso: string; weekAgoIso: string; monthAgoIso: string; limits: AggregateLimits }
  | { kind: "release" };

/** What pulse shows beyond the ranks, read in one go. */
export interface PulseAggregates {
  counts: PulseCounts;
  hot: HotEntry[];
  conflicts: ConflictEdge[];
  activity: AgentActivityRow[];
  tags: TagAffinityRow[];
}

export interface GraphJobResult {
  rank: SelectionRanking;
  aggregates: PulseAggregates;
  release: null;
}

export interface WorkerRequest {
  id: number;
  source: StoreSource;
  job: GraphJob;
}

export type WorkerReply = { id: number; ok: true; result: unknown } | { id: number; ok: false; message: string };

/** Stores this thread keeps open, by source, until the server that asked releases them; the oldest closes past a few. */
const MAX_OPEN_STORES = 8;
const stores = new Map<string, Promise<Store>>();
const keyOf = (source: StoreSource): string => JSON.stringify([source.databaseUrl ?? null, source.file]);

async function storeFor(source: StoreSource): Promise<Store> {
  const key = keyOf(source);
  let store = stores.get(key);
  if (!store) {
    store = openReadOnlyStore(source);
    stores.set(key, store);
    store.catch(() => stores.delete(key));
    for (const [oldest, open] of stores) {
      if (stores.size <= MAX_OPEN_STORES) break;
      stores.delete(oldest);
      void open.then((closing) => closing.close()).catch(() => undefined);
    }
  }
  return store;
}

async function release(source: StoreSource): Promise<null> {
  const key = keyOf(source);
  const store = stores.get(key);
  stores.delete(key);
  if (store) await (await store).close();
  return null;
}

async function run(source: StoreSource, job: GraphJob): Promise<unknown> {
  if (job.kind === "release") return release(source);
  const store = await storeFor(source);
  const reader = store.reader;
  const { selection, nowIso } = job;
  if (job.kind === "rank") {
    const nodes = await store.knowledge.nodes(reader, selection, nowIso, MAX_RANKED_ENTRIES + 1);
    const keys = await store.knowledge.edgeKeys(reader, selection, MAX_RANKED_EDGES + 1);
    return rankSelection(nodes, keys, job.keep);
  }
  const { limits } = job;
  const aggregates: PulseAggregates = {
    counts: await store.knowledge.counts(reader, selection, nowIso),
    hot: await store.knowledge.hot(reader, selection, nowIso, job.weekAgoIso, limits.hot),
    conflicts: await store.knowledge.conflicts(reader, selection, nowIso, limits.conflicts),
    activity: await store.knowledge.activity(reader, selection, job.dayAgoIso, limits.agents),
    tags: await store.knowledge.tagUse(reader, selection, nowIso, job.monthAgoIso, limits.tagRows),
  };
  return aggregates;
}

const port = parentPort;
if (port) {
  port.on("message", (request: WorkerRequest) => {
    run(request.source, request.job).then(
      (result) => port.postMessage({ id: request.id, ok: true, result } satisfies WorkerReply),
      (error: unknown) => port.postMessage({ id: request.id, ok: false, message: error instanceof Error ? error.message : String(error) } satisfies WorkerReply),
    );
  });
}
