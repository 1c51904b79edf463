// The mesh (CONTRACT §16, issue 28) between real `cairn serve` processes on loopback, on either
// backend. Two instances linked both ways are partitioned while each makes `writes + edits +
// deletes` changes to a shared project, then brought together: on-demand syncs on both sides, in
// passes, until neither applies anything and their merkle roots match (time, bytes, entries/s).
// Then idle syncs (nothing new). Then a third and fourth instance: a peer holding `entries`
// entries (the hash embedder: it only serves its feed) and a follower that pulls them all with the
// bundled model, re-embedding each (sync throughput); then anti-entropy over the converged copy,
// with nothing differing and with one copy row deleted behind Cairn's back, as a restore would.
import { randomUUID } from "node:crypto";
import { join } from "node:path";
import { setTimeout as sleep } from "node:timers/promises";
import pg from "pg";
import { PgDb } from "../src/store/postgres/connection.js";
import { connect } from "../src/store/sqlite/connection.js";
import { closedPort as freePort } from "../test/helpers/ports.js";
import { noteStream, type Note } from "./corpus.js";
import {
  judge,
  latencyStats,
  newDataDir,
  progress,
  removeDataDir,
  round,
  runClients,
  samplesRow,
  startServerProcess,
  type Row,
  type Section,
  type ServerProcess,
} from "./lib.js";
import { benchDatabaseUrl, databaseEnv } from "./postgres.js";

export interface MeshOptions {
  /** Entries each side writes, and both sync, before the partition: what its edits and deletes touch. */
  baseline: number;
  /** Changes each side makes while the other is down. */
  partition: { writes: number; edits: number; deletes: number };
  /** On-demand syncs timed with nothing new. */
  idleSyncs: number;
  /** Entries of the peer's linked project that the follower pulls, and anti-entropy then compares. */
  entries: number;
  /** Anti-entropy syncs timed with nothing differing, and repairs of one deleted copy row. */
  antiEntropyRuns: number;
  repairs: number;
}

const PROJECT = "shared";
/** Pages one sync run pulls at most (src/services/mesh/sync.ts PAGE_BUDGET): a run with fewer had nothing more. */
const PAGE_BUDGET = 20;
/** Lines per POST /admin/import: well under MAX_BODY_BYTES (1 MiB) at ~600 bytes a line. */
const IMPORT_LINES = 500;
const IN_FLIGHT = 8;
const STREAMS = { a: 2801, b: 2802, peer: 2803 };
const WRITER = "bench-writer";

interface SyncResult {
  pages: number;
  applied: number;
  skipped: number;
  rejected: number;
  tombstones: number;
  duration_ms: number;
  cursor: number;
  bytes: number;
}

/** A sync run and what it took as the caller saw it. */
interface TimedSync extends SyncResult {
  ms: number;
  /** 409s waited out: a background sync of the link held it. */
  busy: number;
}

/** An instance that is stopped and started again on the same data directory and port. */
interface Instance {
  name: string;
  dataDir: string;
  env: Record<string, string>;
  server: ServerProcess | null;
}

const changed = (result: SyncResult): number => result.applied + result.tombstones;

function running(instance: Instance): ServerProcess {
  if (!instance.server) throw new Error(`${instance.name} is not running`);
  return instance.server;
}

function instance(name: string, env: Record<string, string> = {}): Instance {
  return {
    name,
    dataDir: newDataDir(),
    env: {
      INSTANCE_NAME: name,
      // Only the syncs asked for run: a link is due again a day after each (interval_seconds), and the
      // tick that looks for due links comes rarely; gossip is not measured.
      MESH_SYNC_TICK_SECONDS: "60",
      MESH_GOSSIP_SECONDS: "86400",
      MAX_ENTRIES_PER_PROJECT: "1000000",
      ...env,
    },
    server: null,
  };
}

/** Starts (or starts again) an instance; resolves once its model is loaded, so no copy waits for the backfill. */
async function start(target: Instance): Promise<ServerProcess> {
  const server = await startServerProcess(target.dataDir, 16, target.env);
  target.server = server;
  await server.waitForHealth((health) => health.embeddings === "ready");
  return server;
}

async function stop(target: Instance): Promise<void> {
  await target.server?.stop();
  target.server = null;
}

async function call<T>(server: ServerProcess, method: string, path: string, body: unknown, status: number): Promise<T> {
  const reply = await server.client.request(method, path, body === undefined ? { as: server.owner() } : { body, as: server.owner() });
  if (reply.status !== status) throw new Error(`${method} ${path}: ${reply.status} ${reply.body.slice(0, 500)}`);
  return (reply.body === "" ? undefined : JSON.parse(reply.body)) as T;
}

async function createProject(server: ServerProcess): Promise<void> {
  await call(server, "POST", "/projects", { name: PROJECT }, 201);
}

async function mintToken(server: ServerProcess, capabilities: string[]): Promise<string> {
  return (await call<{ token: string }>(server, "POST", "/mesh/tokens", { label: "bench", projects: [PROJECT], capabilities }, 201)).token;
}

/** `from` links to `to` (a day between scheduled syncs); returns the link's id. */
async function linkTo(from: ServerProcess, to: ServerProcess, token: string, direction: "pull" | "both"): Promise<string> {
  const body = { url: to.url, token, projects: [PROJECT], direction, interval_seconds: 86_400 };
  return (await call<{ id: string }>(from, "POST", "/mesh/peers", body, 201)).id;
}

async function merkleRoot(server: ServerProcess): Promise<{ root: string; count: number }> {
  return call<{ root: string; count: number }>(server, "GET", `/memory/merkle?project=${PROJECT}`, undefined, 200);
}

/** What the 409s waited out said (a background sync holding the link, or a lease lost). */
const conflicts = new Set<string>();

/** POST /mesh/peers/{id}/sync, waiting out a background sync that holds the link (409). */
async function syncNow(server: ServerProcess, linkId: string, antiEntropy = false): Promise<TimedSync> {
  const path = `/mesh/peers/${linkId}/sync${antiEntropy ? "?anti_entropy=true" : ""}`;
  let busy = 0;
  for (;;) {
    const started = performance.now();
    const reply = await server.client.request("POST", path, { as: server.owner() });
    const ms = performance.now() - started;
    if (reply.status === 409 && busy < 600) {
      busy++;
      conflicts.add(reply.body.slice(0, 200));
      await sleep(500);
      continue;
    }
    if (reply.status !== 200) throw new Error(`POST ${path}: ${reply.status} ${reply.body.slice(0, 500)}`);
    return { ...(JSON.parse(reply.body) as SyncResult), ms, busy };
  }
}

function entryLine(id: string, note: Note, at: string): string {
  return JSON.stringify({
    kind: "entry",
    id,
    type: "memory",
    agent_id: WRITER,
    project: PROJECT,
    scope: "project",
    content: note.content,
    confidence: 0.9,
    parents: [],
    tags: note.tags,
    headline: null,
    created_at: at,
    updated_at: at,
    version: 1,
    expires_at: null,
    read_count: 0,
    distinct_readers: 0,
    reinforcement_count: 0,
    last_reinforced_at: null,
    superseded_by: null,
    embedding_model: null,
  });
}

interface Written {
  id: string;
  content: string;
}

/**
 * `count` new entries through POST /admin/import, in requests of IMPORT_LINES: ordinary writes
 * (each embedded, with its change_seq and event), one transaction per 250 lines.
 */
async function importEntries(server: ServerProcess, next: () => Note, count: number, label: string): Promise<{ written: Written[]; ms: number }> {
  const owner = server.owner();
  const written: Written[] = [];
  const started = performance.now();
  let reported = 0;
  while (written.length < count) {
    const at = new Date().toISOString();
    const batch = Array.from({ length: Math.min(IMPORT_LINES, count - written.length) }, () => ({ id: randomUUID(), note: next() }));
    const response = await fetch(`${server.url}/admin/import`, {
      method: "POST",
      headers: { "content-type": "application/x-ndjson", "x-agent-id": owner.agentId, "x-api-key": owner.apiKey },
      body: batch.map(({ id, note }) => entryLine(id, note, at)).join("\n"),
    });
    const text = await response.text();
    if (response.status !== 200) throw new Error(`POST /admin/import: ${response.status} ${text.slice(0, 500)}`);
    const result = JSON.parse(text) as { imported: { entries: number }; errors: unknown[] };
    if (result.imported.entries !== batch.length) throw new Error(`POST /admin/import: ${result.imported.entries} of ${batch.length} imported: ${JSON.stringify(result.errors).slice(0, 500)}`);
    written.push(...batch.map(({ id, note }) => ({ id, content: note.content })));
    if (written.length - reported >= 10_000) {
      reported = written.length;
      progress(`  ${label}: ${written.length.toLocaleString("en")} / ${count.toLocaleString("en")} imported`);
    }
  }
  return { written, ms: performance.now() - started };
}

/** A row of samples in ms; `wallMs` when the samples overlapped (ops/s from the wall clock). */
const row = (scenario: string, samples: number[], server: ServerProcess | null, extra: Partial<Row> = {}): Row =>
  samplesRow(scenario, samples, server?.memory().rssMb ?? null, extra);

/** A single measurement: its time in the p50 column (p95 empty), its rate in ops/s. */
function once(scenario: string, ms: number, count: number, cpuMs: number | null, server: ServerProcess | null, note: string): Row {
  return {
    scenario,
    n: count,
    p50Ms: round(ms, 0),
    p95Ms: null,
    opsPerSec: ms > 0 ? round((count * 1000) / ms, 1) : null,
    cpuMsPerOp: cpuMs === null || count === 0 ? null : round(cpuMs / count, 2),
    rssMb: server?.memory().rssMb ?? null,
    note,
  };
}

const kib = (bytes: number): string => `${round(bytes / 1024, 1).toLocaleString("en")} KiB`;
const mib = (bytes: number): string => `${round(bytes / 2 ** 20, 1).toLocaleString("en")} MiB`;

// ---- direct SQL on an instance's store (what a restore or a hand edit does behind Cairn's back) ----

interface Sql {
  all<T>(sql: string, ...params: unknown[]): Promise<T[]>;
  run(sql: string, ...params: unknown[]): Promise<void>;
}

async function withSql<T>(dataDir: string, work: (sql: Sql) => Promise<T>): Promise<T> {
  const url = databaseEnv(dataDir).DATABASE_URL;
  if (url === undefined) {
    const db = connect(join(dataDir, "cairn.db"));
    try {
      return await work({
        all: <R>(sql: string, ...params: unknown[]) => Promise.resolve(db.all<R>(sql, ...params)),
        run: (sql, ...params) => {
          db.run(sql, ...params);
          return Promise.resolve();
        },
      });
    } finally {
      db.close();
    }
  }
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  try {
    const db = new PgDb(client);
    return await work({
      all: <R>(sql: string, ...params: unknown[]) => db.all<R>(sql, ...params),
      run: async (sql, ...params) => {
        await db.run(sql, ...params);
      },
    });
  } finally {
    await client.end();
  }
}

// ---- 1 and 2: a partition, then idle syncs ----

interface Rounds {
  /** Passes: both sides draining at once, each until a run applies nothing and had no more. */
  rounds: number;
  /** Sync runs on both sides. */
  runs: number;
  bytes: number;
  changed: number;
  skipped: number;
  busy: number;
  ms: number;
  /** ms until the roots first matched (checked after each pass). */
  rootsMatchedMs: number | null;
  cpuMs: number;
  byA: number;
  byB: number;
  /** Each run, per side: what A pulled from B and B from A. */
  runsA: SyncSummary[];
  runsB: SyncSummary[];
}

type SyncSummary = Pick<SyncResult, "pages" | "applied" | "tombstones" | "skipped" | "bytes"> & { ms: number };

const summary = (result: TimedSync): SyncSummary => ({ pages: result.pages, applied: result.applied, tombstones: result.tombstones, skipped: result.skipped, bytes: result.bytes, ms: round(result.ms, 0) });

const quiet = (result: SyncResult): boolean => changed(result) === 0 && result.rejected === 0 && result.pages < PAGE_BUDGET;

/**
 * One side syncs on demand, each run asked for as soon as the last returned (so a run stopped at its
 * page budget, which is due again at once, is never left for the background tick), until a run
 * applies nothing and had no more to pull. Returns its runs.
 */
async function drain(server: ServerProcess, linkId: string): Promise<TimedSync[]> {
  const runs: TimedSync[] = [];
  for (;;) {
    const result = await syncNow(server, linkId);
    runs.push(result);
    if (quiet(result)) return runs;
  }
}

/**
 * Both sides drain at once, pass after pass, until a pass in which each side's first run was
 * already quiet and the two merkle roots match: what the other side applied meanwhile (the
 * echoes of one's own entries, which come back and are skipped) is pulled too.
 */
async function converge(a: ServerProcess, linkA: string, b: ServerProcess, linkB: string, limitRounds = 50): Promise<Rounds> {
  const total: Rounds = { rounds: 0, runs: 0, bytes: 0, changed: 0, skipped: 0, busy: 0, ms: 0, rootsMatchedMs: null, cpuMs: 0, byA: 0, byB: 0, runsA: [], runsB: [] };
  const cpuBefore = a.cpuMs() + b.cpuMs();
  const started = performance.now();
  for (;;) {
    total.rounds++;
    const [fromB, fromA] = await Promise.all([drain(a, linkA), drain(b, linkB)]);
    total.runsA.push(...fromB.map(summary));
    total.runsB.push(...fromA.map(summary));
    for (const result of [...fromB, ...fromA]) {
      total.runs++;
      total.bytes += result.bytes;
      total.changed += changed(result);
      total.skipped += result.skipped;
      total.busy += result.busy;
    }
    total.byA += fromB.reduce((sum, result) => sum + changed(result), 0);
    total.byB += fromA.reduce((sum, result) => sum + changed(result), 0);
    const [rootA, rootB] = await Promise.all([merkleRoot(a), merkleRoot(b)]);
    const matched = rootA.root === rootB.root;
    if (matched && total.rootsMatchedMs === null) total.rootsMatchedMs = performance.now() - started;
    if (!matched) total.rootsMatchedMs = null;
    if (matched && fromB.length === 1 && fromA.length === 1) break;
    if (total.rounds >= limitRounds) throw new Error(`no convergence after ${limitRounds} passes: roots ${rootA.root.slice(0, 12)} (${rootA.count}) and ${rootB.root.slice(0, 12)} (${rootB.count})`);
  }
  total.ms = performance.now() - started;
  total.cpuMs = a.cpuMs() + b.cpuMs() - cpuBefore;
  return total;
}

/** One side's changes while the other is down: new entries (import), then edits and deletes of its baseline (HTTP, 8 in flight). */
async function churn(side: Instance, next: () => Note, own: Written[], options: MeshOptions, rows: Row[]): Promise<void> {
  const server = running(side);
  const { writes, edits, deletes } = options.partition;
  progress(`mesh: ${side.name} alone: ${writes.toLocaleString("en")} writes, ${edits.toLocaleString("en")} edits, ${deletes.toLocaleString("en")} deletes`);
  const imported = await importEntries(server, next, writes, side.name);
  rows.push(once(`${side.name} alone: ${writes.toLocaleString("en")} writes by /admin/import`, imported.ms, writes, null, server, `${IMPORT_LINES} lines a request; each embedded (use-lite)`));
  const owner = server.owner();
  const edited = own.slice(0, edits);
  const edit = await runClients(server, IN_FLIGHT, edited.length, async (index) => {
    const entry = edited[index] as Written;
    const reply = await server.client.request("PATCH", `/memory/${entry.id}`, { body: { content: `${entry.content} Revised while the link was down.` }, as: owner });
    if (reply.status !== 200) throw new Error(`PATCH /memory/${entry.id}: ${reply.status} ${reply.body.slice(0, 300)}`);
  });
  rows.push(row(`${side.name} alone: PATCH /memory, ${IN_FLIGHT} in flight`, edit.latencies, server, { opsPerSec: round((edits * 1000) / edit.wallMs, 1), cpuMsPerOp: round(edit.serverCpuMs / edits, 2) }));
  const doomed = own.slice(edits, edits + deletes);
  const removal = await runClients(server, IN_FLIGHT, doomed.length, async (index) => {
    const entry = doomed[index] as Written;
    const reply = await server.client.request("DELETE", `/memory/${entry.id}`, { as: owner });
    if (reply.status !== 204) throw new Error(`DELETE /memory/${entry.id}: ${reply.status} ${reply.body.slice(0, 300)}`);
  });
  rows.push(row(`${side.name} alone: DELETE /memory, ${IN_FLIGHT} in flight`, removal.latencies, server, { opsPerSec: round((deletes * 1000) / removal.wallMs, 1), cpuMsPerOp: round(removal.serverCpuMs / deletes, 2) }));
}

async function partitionStage(options: MeshOptions, rows: Row[], details: Record<string, unknown>): Promise<{ convergence: Rounds; idleBytes: number[]; idle: Row }> {
  const { baseline, partition } = options;
  if (partition.edits + partition.deletes > baseline) throw new Error("the partition edits and deletes more entries than the baseline has");
  const [portA, portB] = [await freePort(), await freePort()];
  const a = instance("bench-a", { PORT: String(portA) });
  const b = instance("bench-b", { PORT: String(portB) });
  const perSide = partition.writes + partition.edits + partition.deletes;
  try {
    progress("mesh: two instances, linked both ways");
    const serverA = await start(a);
    const serverB = await start(b);
    await createProject(serverA);
    await createProject(serverB);
    const linkA = await linkTo(serverA, serverB, await mintToken(serverB, ["pull", "gossip", "handshake"]), "both");
    const back = (await call<{ id: string; peer_name: string }[]>(serverB, "GET", "/mesh/peers", undefined, 200)).find((link) => link.peer_name === a.name);
    if (!back) throw new Error("the handshake made no link back");
    const linkB = back.id;
    // The handshake's link syncs every 300 s by default: only the syncs asked for are wanted here.
    await call(serverB, "PATCH", `/mesh/peers/${linkB}`, { interval_seconds: 86_400 }, 200);

    progress(`mesh: a baseline of ${baseline.toLocaleString("en")} entries each side, synced`);
    const nextA = noteStream(STREAMS.a);
    const nextB = noteStream(STREAMS.b);
    const ownA = (await importEntries(serverA, nextA, baseline, a.name)).written;
    const ownB = (await importEntries(serverB, nextB, baseline, b.name)).written;
    const before = await converge(serverA, linkA, serverB, linkB);
    details.baseline_sync = { entries_each_side: baseline, seconds: round(before.ms / 1000, 1), bytes: before.bytes, runs: before.runs, background_syncs_waited_out: before.busy };

    // The partition: B down while A changes; then A down while B changes; then both up.
    await stop(b);
    await churn(a, nextA, ownA, options, rows);
    await stop(a);
    progress("mesh: B started again (same data directory and port)");
    await start(b);
    await churn(b, nextB, ownB, options, rows);
    progress("mesh: A started again; syncing both ways until the roots match");
    const againA = await start(a);
    const againB = running(b);
    const convergence = await converge(againA, linkA, againB, linkB);
    const root = await merkleRoot(againA);
    const convergedNote =
      `${convergence.runs} sync runs (both sides at once, ${convergence.rounds} passes); ${mib(convergence.bytes)} pulled; ` +
      `applied ${convergence.byA.toLocaleString("en")} at A, ${convergence.byB.toLocaleString("en")} at B (${convergence.skipped.toLocaleString("en")} skipped: own entries echoed back); ` +
      `roots matched at ${round((convergence.rootsMatchedMs ?? convergence.ms) / 1000, 1)} s; ${root.count.toLocaleString("en")} leaves`;
    rows.push(once(`converge after the partition, ${perSide.toLocaleString("en")} changes each side`, convergence.ms, convergence.changed, convergence.cpuMs, againA, convergedNote));
    details.partition = {
      changes_each_side: partition,
      seconds: round(convergence.ms / 1000, 2),
      roots_matched_seconds: convergence.rootsMatchedMs === null ? null : round(convergence.rootsMatchedMs / 1000, 2),
      bytes: convergence.bytes,
      runs: convergence.runs,
      applied: convergence.changed,
      applied_at_a: convergence.byA,
      applied_at_b: convergence.byB,
      skipped: convergence.skipped,
      applied_per_second: round((convergence.changed * 1000) / convergence.ms, 1),
      cpu_ms_both_servers: round(convergence.cpuMs, 0),
      background_syncs_waited_out: convergence.busy,
      leaves: root.count,
      passes: convergence.rounds,
      runs_at_a: convergence.runsA,
      runs_at_b: convergence.runsB,
    };

    progress(`mesh: ${options.idleSyncs} idle syncs`);
    const samples: number[] = [];
    const idleBytes: number[] = [];
    const cpuBefore = againA.cpuMs() + againB.cpuMs();
    for (let run = 0; run < options.idleSyncs; run++) {
      const result = await syncNow(againA, linkA);
      if (changed(result) !== 0) throw new Error(`an idle sync applied ${changed(result)}`);
      samples.push(result.ms);
      idleBytes.push(result.bytes);
    }
    const cpu = againA.cpuMs() + againB.cpuMs() - cpuBefore;
    const bytes = latencyStats(idleBytes);
    const idle = row(`idle sync (nothing new), A ← B, ${root.count.toLocaleString("en")} entries`, samples, againA, {
      cpuMsPerOp: round(cpu / options.idleSyncs, 2),
      note: `${bytes.p50} bytes pulled (max ${bytes.max}); CPU: both servers`,
    });
    rows.push(idle);
    details.idle_sync = { runs: options.idleSyncs, bytes_p50: bytes.p50, bytes_max: bytes.max, p50_ms: idle.p50Ms, p95_ms: idle.p95Ms };
    return { convergence, idleBytes, idle };
  } finally {
    await stop(a);
    await stop(b);
    await removeDataDir(a.dataDir);
    await removeDataDir(b.dataDir);
  }
}

// ---- 3: sync throughput, then anti-entropy, at `entries` ----

interface Throughput {
  ms: number;
  applied: number;
  bytes: number;
  runs: number;
}

async function antiEntropyStage(options: MeshOptions, rows: Row[], details: Record<string, unknown>): Promise<{ throughput: Throughput; idle: Row; repair: Row }> {
  const size = `${options.entries.toLocaleString("en")} entries`;
  // The peer only serves its feed: the hash embedder makes its import quick and changes nothing pulled.
  const peer = instance("bench-peer", { EMBEDDING_MODEL: "hash" });
  const follower = instance("bench-follower");
  try {
    const source = await start(peer);
    await createProject(source);
    progress(`mesh: the peer imports ${size}`);
    const imported = await importEntries(source, noteStream(STREAMS.peer), options.entries, peer.name);
    details.peer_import_seconds = round(imported.ms / 1000, 1);
    const sink = await start(follower);
    await createProject(sink);
    const link = await linkTo(sink, source, await mintToken(source, ["pull"]), "pull");

    progress(`mesh: the follower pulls ${size} (use-lite re-embeds each)`);
    const total: Throughput = { ms: 0, applied: 0, bytes: 0, runs: 0 };
    let busy = 0;
    const runMs: number[] = [];
    const cpuBefore = sink.cpuMs();
    const peerCpuBefore = source.cpuMs();
    const started = performance.now();
    for (;;) {
      const result = await syncNow(sink, link);
      total.runs++;
      total.applied += changed(result);
      total.bytes += result.bytes;
      busy += result.busy;
      runMs.push(result.ms);
      if (total.runs % 5 === 0) progress(`  ${total.applied.toLocaleString("en")} applied in ${round((performance.now() - started) / 1000)} s`);
      if (changed(result) === 0 && result.pages < PAGE_BUDGET) break;
    }
    total.ms = performance.now() - started;
    const cpu = sink.cpuMs() - cpuBefore;
    const peerCpu = source.cpuMs() - peerCpuBefore;
    const [ours, theirs] = await Promise.all([merkleRoot(sink), merkleRoot(source)]);
    const unembedded = await withSql(follower.dataDir, (sql) =>
      sql.all<{ n: number | string }>("SELECT count(*) AS n FROM memory WHERE project = ? AND deleted_at IS NULL AND embedding_model IS NULL", PROJECT),
    );
    const missing = Number(unembedded[0]?.n ?? 0);
    const throughputNote =
      `use-lite on the follower (the peer: hash); ${total.runs} runs of ≤ ${PAGE_BUDGET} pages of 500; ${mib(total.bytes)} pulled; ` +
      `roots ${ours.root === theirs.root ? "match" : "DIFFER"}; ${missing.toLocaleString("en")} copies without a vector; CPU: the follower`;
    rows.push(once(`initial sync of ${size} (sync throughput)`, total.ms, total.applied, cpu, sink, throughputNote));
    details.sync_throughput = {
      entries: options.entries,
      applied: total.applied,
      seconds: round(total.ms / 1000, 1),
      applied_per_second: round((total.applied * 1000) / total.ms, 1),
      bytes: total.bytes,
      runs: total.runs,
      run_ms: runMs.map((ms) => round(ms, 0)),
      follower_model: "use-lite",
      peer_model: "hash",
      follower_cpu_ms: round(cpu, 0),
      peer_cpu_ms: round(peerCpu, 0),
      copies_without_vector: missing,
      roots_match: ours.root === theirs.root,
      background_syncs_waited_out: busy,
    };
    if (ours.root !== theirs.root) throw new Error(`after the initial sync the roots differ (${ours.count} against ${theirs.count} leaves)`);

    progress(`mesh: anti-entropy at ${size}, nothing differing (${options.antiEntropyRuns} runs)`);
    const idleSamples: number[] = [];
    const idleBytes: number[] = [];
    const idleCpuBefore = sink.cpuMs() + source.cpuMs();
    for (let run = 0; run < options.antiEntropyRuns; run++) {
      const result = await syncNow(sink, link, true);
      if (changed(result) !== 0) throw new Error(`anti-entropy with nothing differing applied ${changed(result)}`);
      idleSamples.push(result.ms);
      idleBytes.push(result.bytes);
    }
    const idleCpu = sink.cpuMs() + source.cpuMs() - idleCpuBefore;
    const idle = row(`anti-entropy sync, nothing differs, ${size}`, idleSamples, sink, {
      cpuMsPerOp: round(idleCpu / options.antiEntropyRuns, 2),
      note: `${kib(latencyStats(idleBytes).p50)} pulled (the feed page and the peer's summary); the follower hashes every leaf afresh; CPU: both`,
    });
    rows.push(idle);

    progress(`mesh: anti-entropy repairs of one copy row deleted in the follower's database (${options.repairs} runs)`);
    const repairSamples: number[] = [];
    const repairBytes: number[] = [];
    const repairCpuBefore = sink.cpuMs() + source.cpuMs();
    for (let run = 0; run < options.repairs; run++) {
      const lost = await withSql(follower.dataDir, async (sql) => {
        const [victim] = await sql.all<{ id: string }>(
          "SELECT id FROM memory WHERE project = ? AND deleted_at IS NULL ORDER BY id LIMIT 1 OFFSET ?",
          PROJECT,
          ((run + 1) * 7919) % Math.max(1, options.entries - 1),
        );
        if (!victim) throw new Error("no copy to delete");
        await sql.run("DELETE FROM memory WHERE id = ?", victim.id);
        return victim.id;
      });
      const plain = await syncNow(sink, link);
      if (changed(plain) !== 0) throw new Error(`a plain sync applied ${changed(plain)} after the deletion`);
      const result = await syncNow(sink, link, true);
      if (result.applied !== 1) throw new Error(`the repair of ${lost} applied ${result.applied}, not 1`);
      repairSamples.push(result.ms);
      repairBytes.push(result.bytes);
    }
    const repairCpu = sink.cpuMs() + source.cpuMs() - repairCpuBefore;
    const after = await Promise.all([merkleRoot(sink), merkleRoot(source)]);
    const repair = row(`anti-entropy sync, one bucket differs (a copy row deleted), ${size}`, repairSamples, sink, {
      cpuMsPerOp: round(repairCpu / options.repairs, 2),
      note: `${kib(latencyStats(repairBytes).p50)} pulled (summary, one bucket, one entry); 1 applied each; roots ${after[0].root === after[1].root ? "match" : "DIFFER"} after; CPU: both (a plain sync too)`,
    });
    rows.push(repair);
    details.anti_entropy = {
      entries: options.entries,
      nothing_differs: { runs: options.antiEntropyRuns, p50_ms: idle.p50Ms, p95_ms: idle.p95Ms, bytes_p50: latencyStats(idleBytes).p50, bytes_max: latencyStats(idleBytes).max },
      one_bucket_differs: { runs: options.repairs, p50_ms: repair.p50Ms, p95_ms: repair.p95Ms, bytes_p50: latencyStats(repairBytes).p50, bytes_max: latencyStats(repairBytes).max },
    };
    return { throughput: total, idle, repair };
  } finally {
    await stop(peer);
    await stop(follower);
    await removeDataDir(peer.dataDir);
    await removeDataDir(follower.dataDir);
  }
}

export async function runMeshBench(options: MeshOptions): Promise<Section> {
  const rows: Row[] = [];
  const details: Record<string, unknown> = { backend: benchDatabaseUrl() ? "postgres" : "sqlite", follower_model: "use-lite" };
  const { convergence, idle } = await partitionStage(options, rows, details);
  const stage = await antiEntropyStage(options, rows, details);
  details.conflicts_waited_out = [...conflicts];
  const perSide = options.partition.writes + options.partition.edits + options.partition.deletes;
  const seconds = convergence.ms / 1000;
  const throughput = (stage.throughput.applied * 1000) / stage.throughput.ms;
  const idleBytes = (details.idle_sync as { bytes_max: number }).bytes_max;
  return {
    name: "mesh",
    title:
      `Mesh: a partition of ${perSide.toLocaleString("en")} changes each side, idle syncs, ` +
      `sync throughput and anti-entropy at ${options.entries.toLocaleString("en")} entries (follower: use-lite)`,
    rows,
    targets: [
      {
        what: `convergence after the partition (${perSide.toLocaleString("en")} changes each side)`,
        goal: "≤ 120 s",
        measured: `${round(seconds, 1)} s, ${mib(convergence.bytes)}, ${round((convergence.changed * 1000) / convergence.ms, 0)} applied/s`,
        met: judge(seconds, (value) => value <= 120),
      },
      { what: "idle sync, p95", goal: "≤ 50 ms", measured: `${idle.p95Ms} ms`, met: judge(idle.p95Ms, (p95) => p95 <= 50) },
      { what: "idle sync, bytes", goal: "≤ 1 KiB", measured: `${idleBytes} bytes`, met: judge(idleBytes, (value) => value <= 1024) },
      {
        what: "sync throughput (re-embedding with use-lite)",
        goal: "≥ 100 entries/s",
        measured: `${round(throughput, 0)} entries/s`,
        met: judge(throughput, (value) => value >= 100),
      },
      {
        what: `anti-entropy with nothing differing, p95, ${options.entries.toLocaleString("en")} entries`,
        goal: "≤ 2,000 ms",
        measured: `${stage.idle.p95Ms} ms`,
        met: judge(stage.idle.p95Ms, (p95) => p95 <= 2000),
      },
      {
        what: `anti-entropy repairing one bucket, p95, ${options.entries.toLocaleString("en")} entries`,
        goal: "≤ 3,000 ms",
        measured: `${stage.repair.p95Ms} ms`,
        met: judge(stage.repair.p95Ms, (p95) => p95 <= 3000),
      },
    ],
    details,
  };
}
