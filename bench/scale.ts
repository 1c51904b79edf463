// Several `cairn serve` processes on one PostgreSQL database, as a team would run them behind a
// load balancer: 1, 2 and 3 servers, each with its own data directory, clients spread round-robin.
// Task claims race across servers (and every task must still be completed exactly once); memory
// writes show what another server buys on this machine, where servers and PostgreSQL share its cores.
import { noteStream, seededRandom, type Random } from "./corpus.js";
import { createTasks } from "./coordination.js";
import {
  expectStatus,
  latencyStats,
  progress,
  registerMany,
  round,
  rowOf,
  runClients,
  startServerGroup,
  stopServerGroup,
  type Credentials,
  type HttpClient,
  type Row,
  type Section,
  type ServerProcess,
} from "./lib.js";
import { backendCpu, backendCpuDelta, createDatabase, databaseUrl, dropDatabase, query } from "./postgres.js";
import { holdsBetween, readHolds, summarise } from "./lock-holds.js";
import { registerWriters, writeNote } from "./write.js";

export interface ScaleOptions {
  serverCounts: number[];
  agents: number;
  tasks: number;
  writeClients: number;
  writes: number;
  writers: number;
  warmup: number;
}

/** Open tasks an agent looks at before picking one at random: a page of them, as an agent would list. */
const CANDIDATES = 50;
const WRITE_STREAM = 6001;

/** Server CPU summed over all of them, as runClients reads one server's. */
const together = (servers: ServerProcess[]): Pick<ServerProcess, "cpuMs"> => ({ cpuMs: () => servers.reduce((sum, server) => sum + server.cpuMs(), 0) });

interface Usage {
  /** Per server, in start order. */
  serverCpuMs: number[];
  postgresCpuMs: number | null;
}

/** Runs `work` and reports the CPU each server and PostgreSQL's backends on `database` used meanwhile. */
async function measured<T>(servers: ServerProcess[], database: string, work: () => Promise<T>): Promise<{ result: T; usage: Usage }> {
  const serversBefore = servers.map((server) => server.cpuMs());
  const postgresBefore = await backendCpu(database);
  const result = await work();
  const postgresAfter = await backendCpu(database);
  const serverCpuMs = servers.map((server, index) => round(server.cpuMs() - (serversBefore[index] ?? 0), 0));
  const postgresCpuMs = backendCpuDelta(postgresBefore, postgresAfter);
  return { result, usage: { serverCpuMs, postgresCpuMs: postgresCpuMs === null ? null : round(postgresCpuMs, 0) } };
}

const usageNote = (servers: ServerProcess[], usage: Usage): string => {
  const rss = servers.map((server) => Math.round(server.memory().rssMb));
  const cpu = usage.serverCpuMs.reduce((sum, ms) => sum + ms, 0);
  const parts = [`server CPU Σ ${cpu} ms (${usage.serverCpuMs.join("+")})`, `PostgreSQL CPU ${usage.postgresCpuMs ?? "?"} ms`, `RSS ${rss.join("+")} MB`];
  return parts.join("; ");
};

const totalRss = (servers: ServerProcess[]): number => round(servers.reduce((sum, server) => sum + server.memory().rssMb, 0));

interface Agent {
  credentials: Credentials;
  client: HttpClient;
  random: Random;
}

interface ClaimTally {
  won: number[];
  lost: number[];
  lists: number[];
  /** Claims answered 200 and completes answered 200, per task id. */
  wins: Map<string, number>;
  completions: Map<string, number>;
  /** Cycles that found no open task left although the tasks should have lasted: a sign of a double claim. */
  starved: number;
}

const bump = (counts: Map<string, number>, id: string): void => void counts.set(id, (counts.get(id) ?? 0) + 1);

/**
 * What an agent does for its next piece of work: lists open, unblocked tasks, claims one of them
 * at random, and on a 409 (another agent, maybe on another server, got there first) tries the next.
 * Returns the task it won, or null when none was left.
 */
async function claimNext(agent: Agent, tally: ClaimTally): Promise<string | null> {
  let started = performance.now();
  const listed = expectStatus("GET /tasks", await agent.client.get(`/tasks?status=open&unblocked=true&limit=${CANDIDATES}`, agent.credentials), 200);
  tally.lists.push(performance.now() - started);
  const candidates = (JSON.parse(listed.body) as { id: string }[]).map((task) => task.id);
  while (candidates.length > 0) {
    const [id] = candidates.splice(Math.floor(agent.random() * candidates.length), 1) as [string];
    started = performance.now();
    const reply = await agent.client.post(`/tasks/${id}/claim`, {}, agent.credentials);
    const ms = performance.now() - started;
    if (reply.status === 200) {
      tally.won.push(ms);
      bump(tally.wins, id);
      return id;
    }
    expectStatus(`claim ${id}`, reply, 409);
    tally.lost.push(ms);
  }
  return null;
}

interface StoreCheck {
  tasks: number;
  completed: number;
  /** Tasks with more than one outcome row, or more than one task.completed event. */
  outcomesTwice: number;
  eventsTwice: number;
}

/** What the database says happened to the tasks, whichever server did it. */
async function checkStore(url: string): Promise<StoreCheck> {
  const [row] = await query<{ tasks: number; completed: number; outcomes_twice: number; events_twice: number }>(
    url,
    `SELECT (SELECT count(*) FROM tasks)::int AS tasks,
            (SELECT count(*) FROM tasks WHERE status = 'completed')::int AS completed,
            (SELECT count(*) FROM (SELECT task_pk FROM task_outcomes GROUP BY task_pk HAVING count(*) > 1) twice)::int AS outcomes_twice,
            (SELECT count(*) FROM (SELECT payload::json->>'task_id' FROM events WHERE type = 'task.completed' GROUP BY 1 HAVING count(*) > 1) twice)::int AS events_twice`,
  );
  return { tasks: row?.tasks ?? 0, completed: row?.completed ?? 0, outcomesTwice: row?.outcomes_twice ?? 0, eventsTwice: row?.events_twice ?? 0 };
}

const onceEach = (ids: string[], counts: Map<string, number>): { once: number; never: number; twice: number } => ({
  once: ids.filter((id) => counts.get(id) === 1).length,
  never: ids.filter((id) => !counts.has(id)).length,
  twice: ids.filter((id) => (counts.get(id) ?? 0) > 1).length,
});

interface ServerCountResult {
  rows: Row[];
  details: Record<string, unknown>;
}

async function claims(options: ScaleOptions, servers: ServerProcess[], database: string): Promise<ServerCountResult> {
  const [first] = servers as [ServerProcess];
  const owner = first.owner();
  // Registered through the first server: the others must authenticate them from the shared store.
  const registered = await registerMany(first, "bench-scale-agent", options.agents);
  const agents: Agent[] = registered.map((credentials, index) => ({
    credentials,
    client: (servers[index % servers.length] as ServerProcess).client,
    random: seededRandom(7001 + index),
  }));
  progress(`scale: ${servers.length} server(s): creating ${options.tasks} tasks`);
  const tasks = await createTasks(first, owner, options.tasks, 8);

  progress(`scale: ${servers.length} server(s): ${options.agents} agents claim and complete ${options.tasks} tasks`);
  const tally: ClaimTally = { won: [], lost: [], lists: [], wins: new Map(), completions: new Map(), starved: 0 };
  const { result: run, usage } = await measured(servers, database, () =>
    runClients(together(servers), options.agents, tasks.length, async (_index, client) => {
      const agent = agents[client] as Agent;
      const id = await claimNext(agent, tally);
      if (id === null) {
        tally.starved++;
        return;
      }
      expectStatus(`complete ${id}`, await agent.client.post(`/tasks/${id}/complete`, { output: { ok: true } }, agent.credentials), 200);
      bump(tally.completions, id);
    }),
  );
  const store = await checkStore(databaseUrl(database));
  const wins = onceEach(tasks, tally.wins);
  const completions = onceEach(tasks, tally.completions);
  const exactlyOnce =
    completions.once === tasks.length && wins.once === tasks.length && store.completed === tasks.length && store.outcomesTwice === 0 && store.eventsTwice === 0;
  const label = `${servers.length} server${servers.length === 1 ? "" : "s"}`;
  // ops/s of the claim row: tasks claimed and completed per second (the list and the 409s included).
  const claimRow = rowOf(`claims, ${label}, ${options.agents} agents`, { ...run, latencies: tally.won }, totalRss(servers), usageNote(servers, usage));
  const lost = latencyStats(tally.lost);
  const lists = latencyStats(tally.lists);
  const contention: Row = {
    scenario: `  lost claims (409) and lists, ${label}`,
    n: tally.lost.length,
    p50Ms: round(lost.p50, 2),
    p95Ms: round(lost.p95, 2),
    opsPerSec: null,
    cpuMsPerOp: null,
    rssMb: null,
    note:
      `${tally.lost.length} × 409 for ${tally.won.length} won; GET /tasks p50 ${round(lists.p50, 1)} p95 ${round(lists.p95, 1)} ms; ` +
      `exactly once: ${exactlyOnce ? "yes" : "NO"} (${completions.once}/${tasks.length} completed once, store: ${store.completed} completed)`,
  };
  return {
    rows: [claimRow, contention],
    details: {
      tasks: tasks.length,
      claims_won: tally.won.length,
      claims_lost_409: tally.lost.length,
      lists: tally.lists.length,
      starved_cycles: tally.starved,
      claims_per_task: wins,
      completions_per_task: completions,
      store,
      exactly_once: exactlyOnce,
      wall_ms: round(run.wallMs, 0),
      server_cpu_ms: usage.serverCpuMs,
      postgres_cpu_ms: usage.postgresCpuMs,
    },
  };
}

async function writes(options: ScaleOptions, servers: ServerProcess[], database: string, stream: number): Promise<ServerCountResult> {
  const writers = await registerWriters(servers[0] as ServerProcess, options.writers);
  const next = noteStream(stream);
  const statuses: Record<string, number> = {};
  const write = async (_index: number, client: number): Promise<void> => {
    // As in the write benchmark each client sticks to one agent; here also to one server.
    const server = servers[client % servers.length] as ServerProcess;
    await writeNote(server.client, writers[client % writers.length] as Credentials, next(), statuses);
  };
  progress(`scale: ${servers.length} server(s): ${options.writes} writes by ${options.writeClients} clients`);
  await runClients(together(servers), options.writeClients, options.warmup * servers.length, write);
  for (const key of Object.keys(statuses)) delete statuses[key];
  const { result: run, usage } = await measured(servers, database, () => runClients(together(servers), options.writeClients, options.writes, write));
  const duplicates = statuses["200"] ?? 0;
  const label = `writes, ${servers.length} server${servers.length === 1 ? "" : "s"}, ${options.writeClients} clients`;
  const note = `${usageNote(servers, usage)}${duplicates > 0 ? `; ${duplicates} duplicates (200)` : ""}`;
  return {
    rows: [rowOf(label, run, totalRss(servers), note)],
    details: { statuses, wall_ms: round(run.wallMs, 0), server_cpu_ms: usage.serverCpuMs, postgres_cpu_ms: usage.postgresCpuMs },
  };
}

/** One server count on a database of its own: its servers, the claims, then the writes. */
async function serverCount(options: ScaleOptions, count: number, stream: number): Promise<ServerCountResult> {
  const database = await createDatabase();
  const started: ServerProcess[] = [];
  try {
    progress(`scale: starting ${count} server(s) on ${database}`);
    const servers = await startServerGroup(count, { DATABASE_URL: databaseUrl(database) }, Math.max(options.agents, options.writeClients), started);
    const beforeClaims = await readHolds(servers);
    const claimed = await claims(options, servers, database);
    const afterClaims = await readHolds(servers);
    const written = await writes(options, servers, database, stream);
    const afterWrites = await readHolds(servers);
    const lock = { claims: summarise(holdsBetween(beforeClaims, afterClaims)), writes: summarise(holdsBetween(afterClaims, afterWrites)) };
    const lockRows = (["claims", "writes"] as const).flatMap((phase): Row[] => {
      const held = lock[phase];
      if (!held) return [];
      return [{
        scenario: `  events' lock held, ${phase}, ${count} server${count === 1 ? "" : "s"}`,
        n: held.transactions,
        p50Ms: held.p50Ms,
        p95Ms: held.p95Ms,
        opsPerSec: held.ceilingPerSecond,
        cpuMsPerOp: null,
        rssMb: null,
        note: `mean ${held.meanMs} ms; ops/s = 1 / mean hold: the most event-writing transactions a second any number of servers could commit`,
      }];
    });
    return { rows: [...claimed.rows, ...written.rows, ...lockRows], details: { claims: claimed.details, writes: written.details, events_lock: lock } };
  } catch (error) {
    const tails = started.map((server, index) => `server ${index + 1} (${server.exitCode() === undefined ? "running" : `exited ${server.exitCode()}`}):\n${server.stderrTail() || "(empty)"}`);
    throw new Error(`${error instanceof Error ? error.message : String(error)}\n${tails.join("\n")}`, { cause: error });
  } finally {
    await stopServerGroup(started);
    await dropDatabase(database);
  }
}

export async function runScaleBench(options: ScaleOptions): Promise<Section> {
  const rows: Row[] = [];
  const details: Record<string, unknown> = {};
  for (const [index, count] of options.serverCounts.entries()) {
    const result = await serverCount(options, count, WRITE_STREAM + index);
    rows.push(...result.rows);
    details[`${count} server${count === 1 ? "" : "s"}`] = result.details;
  }
  return {
    name: "scale",
    title:
      `Several servers on one PostgreSQL database — ${options.agents} agents over ${options.tasks.toLocaleString("en")} tasks, ` +
      `${options.writes.toLocaleString("en")} writes by ${options.writeClients} clients; clients round-robin over the servers; RSS = sum over servers`,
    rows,
    targets: [],
    details: { candidates_per_list: CANDIDATES, warmup_writes_per_server: options.warmup, ...details },
  };
}
