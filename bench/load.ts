// Fifty agents at once with no think time, the mix a team makes: 40 % searches, 30 % memory
// writes, 30 % coordination (a task claimed then completed, a message sent then the inbox read).
// On SQLite one server; with BENCH_DATABASE_URL three servers on one PostgreSQL database, agents
// spread over them. Afterwards it checks that nothing was lost: every acknowledged write can be
// read back, every task claimed was completed exactly once, every message sent was delivered once.
import { noteStream, queryStream, seededRandom, type Random } from "./corpus.js";
import { createTasks } from "./coordination.js";
import { expectStatus, latencyStats, progress, registerMany, removeDataDir, round, startServerGroup, type Credentials, type HttpClient, type Reply, type Row, type Section, type ServerProcess } from "./lib.js";
import { holdsBetween, readHolds, summarise } from "./lock-holds.js";
import { benchDatabaseUrl, createDatabase, databaseUrl, dropDatabase } from "./postgres.js";

export interface LoadOptions {
  agents: number;
  seconds: number;
  warmupSeconds: number;
  tasks: number;
  /** Servers on PostgreSQL (one database); SQLite always runs one. */
  postgresServers: number;
}

const KINDS = ["search", "write", "claim", "complete", "send", "inbox"] as const;
type Kind = (typeof KINDS)[number];
const TARGET_RATE = 250;
const TARGET_P99_MS = 100;
/** The cap is set above what a run writes: the store's count is then never in question. */
const SERVER_ENV = { MAX_ENTRIES_PER_PROJECT: "10000000" };

interface Agent {
  credentials: Credentials;
  client: HttpClient;
  random: Random;
}

interface Tally {
  latencies: Record<Kind, number[]>;
  errors: Record<Kind, number>;
  /** Entries acknowledged (201 new, 200 reinforced), by id. */
  written: Set<string>;
  claimed: Map<string, number>;
  completed: Map<string, number>;
  sent: Set<string>;
  delivered: Map<string, number>;
}

const newTally = (): Tally => ({
  latencies: Object.fromEntries(KINDS.map((kind) => [kind, []])) as unknown as Record<Kind, number[]>,
  errors: Object.fromEntries(KINDS.map((kind) => [kind, 0])) as Record<Kind, number>,
  written: new Set(),
  claimed: new Map(),
  completed: new Map(),
  sent: new Set(),
  delivered: new Map(),
});

const bump = (counts: Map<string, number>, id: string): void => void counts.set(id, (counts.get(id) ?? 0) + 1);

/** One request of `kind`, timed into `tally`; a status other than `ok` counts as an error. Returns the reply when it was ok. */
async function timed(tally: Tally, kind: Kind, ok: number[], request: () => Promise<Reply>): Promise<Reply | null> {
  const started = performance.now();
  let reply: Reply | null = null;
  try {
    reply = await request();
  } catch {
    reply = null;
  }
  tally.latencies[kind].push(performance.now() - started);
  if (reply && ok.includes(reply.status)) return reply;
  tally.errors[kind]++;
  return null;
}

interface World {
  agents: Agent[];
  tasks: string[];
  nextTask: number;
  nextNote: () => ReturnType<ReturnType<typeof noteStream>>;
  nextQuery: () => string;
}

/** One step of an agent: a search, a write, a task claimed and completed, or a message sent and an inbox read. */
async function step(world: World, agent: Agent, tally: Tally): Promise<void> {
  const roll = agent.random();
  const as = agent.credentials;
  if (roll < 0.4) {
    await timed(tally, "search", [200], () => agent.client.get(`/memory/search?q=${encodeURIComponent(world.nextQuery())}&limit=10`, as));
  } else if (roll < 0.7) {
    const note = world.nextNote();
    const reply = await timed(tally, "write", [200, 201], () => agent.client.post("/memory", note, as));
    if (reply) tally.written.add((JSON.parse(reply.body) as { id: string }).id);
  } else if (roll < 0.85 && world.nextTask < world.tasks.length) {
    const id = world.tasks[world.nextTask++] as string;
    if (!(await timed(tally, "claim", [200], () => agent.client.post(`/tasks/${id}/claim`, {}, as)))) return;
    bump(tally.claimed, id);
    if (await timed(tally, "complete", [200], () => agent.client.post(`/tasks/${id}/complete`, { output: { ok: true } }, as))) bump(tally.completed, id);
  } else {
    const to = world.agents[Math.floor(agent.random() * world.agents.length)] as Agent;
    const sent = await timed(tally, "send", [201], () => agent.client.post("/messages", { to: to.credentials.agentId, body: `load message from ${as.agentId}` }, as));
    if (sent) tally.sent.add((JSON.parse(sent.body) as { id: string }).id);
    const inbox = await timed(tally, "inbox", [200], () => agent.client.post("/messages/inbox/consume", { limit: 10 }, as));
    if (inbox) for (const message of JSON.parse(inbox.body) as { id: string }[]) bump(tally.delivered, message.id);
  }
}

/** Every agent steps without pause until `seconds` have passed. */
async function drive(world: World, seconds: number, tally: Tally): Promise<number> {
  const started = performance.now();
  const deadline = started + seconds * 1000;
  await Promise.all(
    world.agents.map(async (agent) => {
      while (performance.now() < deadline) await step(world, agent, tally);
    }),
  );
  return performance.now() - started;
}

interface Check {
  writesMissing: number;
  tasksCompletedOnce: number;
  tasksNotCompleted: number;
  tasksTwice: number;
  messagesDeliveredOnce: number;
  messagesUndelivered: number;
  messagesTwice: number;
}

/** Reads back what was acknowledged, through the servers in turn, after draining every inbox. */
async function check(world: World, servers: ServerProcess[], owner: Credentials, tally: Tally): Promise<Check> {
  const ids = [...tally.written];
  let writesMissing = 0;
  for (let start = 0; start < ids.length; start += 32) {
    const replies = await Promise.all(ids.slice(start, start + 32).map((id, index) => (servers[index % servers.length] as ServerProcess).client.get(`/memory/${id}`, owner)));
    writesMissing += replies.filter((reply) => reply.status !== 200).length;
  }
  for (const agent of world.agents) {
    for (;;) {
      const reply = expectStatus("drain inbox", await agent.client.post("/messages/inbox/consume", { limit: 100 }, agent.credentials), 200);
      const messages = JSON.parse(reply.body) as { id: string }[];
      for (const message of messages) bump(tally.delivered, message.id);
      if (messages.length === 0) break;
    }
  }
  const claimed = [...tally.claimed.keys()];
  let stored = 0;
  for (const id of claimed) {
    const reply = await (servers[0] as ServerProcess).client.get(`/tasks/${id}`, owner);
    if (reply.status === 200 && (JSON.parse(reply.body) as { status: string }).status === "completed") stored++;
  }
  const sent = [...tally.sent];
  return {
    writesMissing,
    tasksCompletedOnce: claimed.filter((id) => tally.completed.get(id) === 1 && tally.claimed.get(id) === 1).length,
    tasksNotCompleted: claimed.length - stored,
    tasksTwice: claimed.filter((id) => (tally.claimed.get(id) ?? 0) > 1 || (tally.completed.get(id) ?? 0) > 1).length,
    messagesDeliveredOnce: sent.filter((id) => tally.delivered.get(id) === 1).length,
    messagesUndelivered: sent.filter((id) => !tally.delivered.has(id)).length,
    messagesTwice: sent.filter((id) => (tally.delivered.get(id) ?? 0) > 1).length,
  };
}

export async function runLoadBench(options: LoadOptions): Promise<Section> {
  const onPostgres = benchDatabaseUrl() !== undefined;
  const count = onPostgres ? options.postgresServers : 1;
  const database = onPostgres ? await createDatabase() : null;
  const env = database ? { ...SERVER_ENV, DATABASE_URL: databaseUrl(database) } : SERVER_ENV;
  const started: ServerProcess[] = [];
  try {
    const servers = await startServerGroup(count, env, options.agents, started);
    const first = servers[0] as ServerProcess;
    const registered = await registerMany(first, "bench-load-agent", options.agents);
    const random = seededRandom(9001);
    progress(`load: ${count} server(s): creating ${options.tasks} tasks`);
    // Read once: the server removes credentials.json after a while.
    const owner = first.owner();
    const tasks = await createTasks(first, owner, options.tasks, 8);
    const world: World = {
      agents: registered.map((credentials, index) => ({ credentials, client: (servers[index % servers.length] as ServerProcess).client, random: seededRandom(Math.floor(random() * 2 ** 31)) })),
      tasks,
      nextTask: 0,
      nextNote: noteStream(9101),
      nextQuery: queryStream(9201),
    };
    progress(`load: ${options.agents} agents, ${options.warmupSeconds} s of warm-up, then ${options.seconds} s timed`);
    await drive(world, options.warmupSeconds, newTally());
    const tally = newTally();
    const cpuBefore = servers.map((server) => server.cpuMs());
    const holdsBefore = onPostgres ? await readHolds(servers) : null;
    const wallMs = await drive(world, options.seconds, tally);
    const cpuMs = servers.reduce((sum, server, index) => sum + server.cpuMs() - (cpuBefore[index] ?? 0), 0);
    // The events' lock (PostgreSQL): event-writing transactions commit one at a time, however many servers.
    const holds = onPostgres ? summarise(holdsBetween(holdsBefore, await readHolds(servers))) : null;
    const requests = KINDS.reduce((sum, kind) => sum + tally.latencies[kind].length, 0);
    const label = onPostgres ? `${count} servers, PostgreSQL` : "1 server, SQLite";
    const rows: Row[] = KINDS.map((kind) => {
      const stats = latencyStats(tally.latencies[kind]);
      return {
        scenario: `${kind}, ${label}`,
        n: stats.n,
        p50Ms: round(stats.p50, 2),
        p95Ms: round(stats.p95, 2),
        opsPerSec: round((stats.n * 1000) / wallMs, 1),
        cpuMsPerOp: null,
        rssMb: null,
        note: `p99 ${round(stats.p99, 1)} ms, ${tally.errors[kind]} errors`,
      };
    });
    const rss = servers.map((server) => Math.round(server.memory().rssMb));
    rows.push({
      scenario: `all, ${label}`,
      n: requests,
      p50Ms: null,
      p95Ms: null,
      opsPerSec: round((requests * 1000) / wallMs, 1),
      cpuMsPerOp: round(cpuMs / requests, 2),
      rssMb: rss.reduce((sum, value) => sum + value, 0),
      note: `server CPU per request over all kinds; RSS ${rss.join("+")} MB` + (holds ? `; events lock held p50 ${holds.p50Ms} p95 ${holds.p95Ms} mean ${holds.meanMs} ms over ${holds.transactions} transactions` : ""),
    });
    progress("load: checking that nothing was lost");
    const checked = await check(world, servers, owner, tally);
    const lost = checked.writesMissing + checked.tasksNotCompleted + checked.tasksTwice + checked.messagesUndelivered + checked.messagesTwice;
    const worstP99 = Math.max(...KINDS.map((kind) => latencyStats(tally.latencies[kind]).p99).filter((value) => !Number.isNaN(value)));
    const errors = KINDS.reduce((sum, kind) => sum + tally.errors[kind], 0);
    return {
      name: "load",
      title: `${options.agents} agents, no think time, 40 % search / 30 % write / 30 % tasks and messages — ${options.seconds} s timed, ${label}`,
      rows,
      targets: [
        { what: "requests/s, all kinds", goal: `≥ ${TARGET_RATE}/s`, measured: `${round((requests * 1000) / wallMs, 1)}/s`, met: onPostgres ? null : requests * 1000 >= TARGET_RATE * wallMs },
        { what: "p99 of every kind", goal: `≤ ${TARGET_P99_MS} ms`, measured: `${round(worstP99, 1)} ms (worst)`, met: onPostgres ? null : worstP99 <= TARGET_P99_MS },
        { what: "nothing lost (writes read back, tasks completed once, messages delivered once), no errors", goal: "0", measured: `${lost} lost, ${errors} errors`, met: lost === 0 && errors === 0 },
      ],
      details: {
        servers: count,
        wall_ms: round(wallMs, 0),
        server_cpu_ms: round(cpuMs, 0),
        events_lock: holds,
        p99_ms: Object.fromEntries(KINDS.map((kind) => [kind, round(latencyStats(tally.latencies[kind]).p99, 1)])),
        errors: tally.errors,
        writes_acknowledged: tally.written.size,
        tasks_claimed: tally.claimed.size,
        messages_sent: tally.sent.size,
        check: checked,
      },
    };
  } finally {
    await Promise.all(started.map((server) => server.stop()));
    await Promise.all(started.map((server) => removeDataDir(server.dataDir)));
    if (database) await dropDatabase(database);
  }
}
