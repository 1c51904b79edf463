// The price of the events' lock on PostgreSQL. A transaction that writes an event holds the
// `cairn:events` advisory lock from that insert until it commits, so seqs become visible in commit
// order; event-writing transactions therefore commit one at a time, each waiting for the one before
// it to flush its commit. Measured on the store itself (no server, no HTTP): one-event
// transactions through `store.events.insert`, against the same INSERT on the transaction's
// connection without the lock, and without the lock but with the commit-time NOTIFY the store
// also sends, which PostgreSQL serialises too.
import { newId } from "../src/core/ids.js";
import type { NewEventRow } from "../src/store/events.js";
import { PgStore } from "../src/store/postgres/store.js";
import { connectionOf } from "../src/store/postgres/transactions.js";
import { EVENTS_CHANNEL } from "../src/store/postgres/wakeups.js";
import { latencyStats, progress, round, runClients, type Row, type Section } from "./lib.js";
import { backendCpu, backendCpuDelta, createDatabase, databaseUrl, dropDatabase } from "./postgres.js";

export interface SeqlockOptions {
  concurrency: number[];
  transactions: number;
  warmup: number;
}

// The columns of SqlEvents.insert on PostgreSQL, so the variants differ only in the lock (and notify).
const INSERT = "INSERT INTO events (id, type, agent_id, project, private_to, payload, created_at, restricted) VALUES (?, ?, ?, ?, ?, ?, ?, ?) RETURNING seq";

const eventRow = (n: number): NewEventRow => ({
  id: newId(),
  type: "bench.seqlock",
  agent_id: "bench-seqlock",
  project: null,
  private_to: null,
  payload: JSON.stringify({ n }),
  created_at: new Date().toISOString(),
});

interface Variant {
  name: string;
  transaction: (store: PgStore, row: NewEventRow) => Promise<unknown>;
}

const insertDirectly = (store: PgStore, row: NewEventRow, notify: boolean): Promise<unknown> =>
  store.transaction(async (tx) => {
    const db = connectionOf(tx);
    await db.get(INSERT, row.id, row.type, row.agent_id, row.project, row.private_to, row.payload, row.created_at, 0);
    if (notify) await db.run("SELECT pg_notify(?, '')", EVENTS_CHANNEL);
  });

const LOCKED: Variant = { name: "events.insert (lock + notify)", transaction: (store, row) => store.transaction((tx) => store.events.insert(tx, row)) };
const UNLOCKED: Variant = { name: "INSERT, no lock", transaction: (store, row) => insertDirectly(store, row, false) };
const NOTIFY_ONLY: Variant = { name: "INSERT + notify, no lock", transaction: (store, row) => insertDirectly(store, row, true) };

interface Measured {
  variant: Variant;
  concurrency: number;
  row: Row;
}

async function measure(store: PgStore, database: string, variant: Variant, concurrency: number, options: SeqlockOptions, counter: { n: number }): Promise<Measured> {
  const once = async (): Promise<void> => void (await variant.transaction(store, eventRow(counter.n++)));
  // The pool opens its connections during the warm-up, so the CPU reading below covers every backend.
  await runClients({ cpuMs: () => 0 }, concurrency, Math.max(options.warmup, concurrency * 2), once);
  const before = await backendCpu(database);
  const run = await runClients({ cpuMs: () => 0 }, concurrency, options.transactions, once);
  const postgresCpuMs = backendCpuDelta(before, await backendCpu(database));
  const stats = latencyStats(run.latencies);
  return {
    variant,
    concurrency,
    row: {
      scenario: `${variant.name}, concurrency ${concurrency}`,
      n: stats.n,
      p50Ms: round(stats.p50, 2),
      p95Ms: round(stats.p95, 2),
      opsPerSec: round((stats.n * 1000) / run.wallMs, 1),
      cpuMsPerOp: postgresCpuMs === null ? null : round(postgresCpuMs / stats.n, 3),
      rssMb: null,
    },
  };
}

const ratio = (value: number | null, base: number | null): string => (value && base ? `×${(value / base).toFixed(2)}` : "?");

export async function runSeqlockBench(options: SeqlockOptions): Promise<Section> {
  const database = await createDatabase();
  const store = await PgStore.open(databaseUrl(database), { poolSize: Math.max(...options.concurrency) + 2 });
  const results: Measured[] = [];
  try {
    const counter = { n: 0 };
    // The first transactions on a fresh database are slower whichever variant runs them.
    for (const variant of [UNLOCKED, LOCKED, NOTIFY_ONLY]) await runClients({ cpuMs: () => 0 }, 1, options.warmup, async () => void (await variant.transaction(store, eventRow(counter.n++))));
    for (const concurrency of options.concurrency) {
      progress(`seqlock: concurrency ${concurrency}, ${options.transactions} transactions per variant`);
      for (const variant of [UNLOCKED, LOCKED, NOTIFY_ONLY]) results.push(await measure(store, database, variant, concurrency, options, counter));
    }
  } finally {
    await store.close();
    await dropDatabase(database);
  }
  const rows: Row[] = [];
  const ratios: Record<string, unknown> = {};
  for (const concurrency of options.concurrency) {
    const at = (variant: Variant): Row | undefined => results.find((result) => result.variant === variant && result.concurrency === concurrency)?.row;
    const [unlocked, locked, notify] = [at(UNLOCKED), at(LOCKED), at(NOTIFY_ONLY)];
    if (!unlocked || !locked || !notify) continue;
    locked.note = `ops/s ${ratio(locked.opsPerSec, unlocked.opsPerSec)} of no lock, p95 ${ratio(locked.p95Ms, unlocked.p95Ms)}`;
    notify.note = `ops/s ${ratio(notify.opsPerSec, unlocked.opsPerSec)} of no lock, p95 ${ratio(notify.p95Ms, unlocked.p95Ms)}`;
    rows.push(unlocked, locked, notify);
    ratios[`concurrency ${concurrency}`] = {
      locked_vs_unlocked_ops: locked.opsPerSec && unlocked.opsPerSec ? round(locked.opsPerSec / unlocked.opsPerSec, 3) : null,
      notify_vs_unlocked_ops: notify.opsPerSec && unlocked.opsPerSec ? round(notify.opsPerSec / unlocked.opsPerSec, 3) : null,
      locked_vs_unlocked_p95: locked.p95Ms && unlocked.p95Ms ? round(locked.p95Ms / unlocked.p95Ms, 3) : null,
    };
  }
  return {
    name: "seqlock",
    title:
      `Events' advisory lock (PgStore, no server) — ${options.transactions.toLocaleString("en")} one-event transactions per row; ` +
      "CPU ms/op = PostgreSQL backends' CPU per transaction",
    rows,
    targets: [],
    details: { ratios, pool_size: Math.max(...options.concurrency) + 2, statement: INSERT },
  };
}
