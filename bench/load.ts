// Fifty agents at once, the mix a team makes: 40 % searches, 30 % memory writes, 30 % coordination
// (a task claimed then completed, a message sent then the inbox read). Two phases on one server
// group: first the agents together offer a set rate (250 requests/s, the target): the phase's
// steps arrive at uniformly random times, each to a random agent (a Poisson process whose count is
// fixed, so the rate offered is the rate asked for, not a draw around it), and a request's
// latency counts from when it was due, so a server that falls behind shows it (no coordinated
// omission); then they step with no think time, which
// finds the rate at saturation. In the second phase fifty agents are always waiting on the server,
// so its latencies are fifty over the rate it reaches (Little's law), whatever the server does.
// On SQLite one server; with BENCH_DATABASE_URL three servers on one PostgreSQL database, agents
// spread over them. Afterwards it checks that nothing was lost in either phase: every
// acknowledged write can be read back, every task claimed was completed exactly once, every
// message sent was delivered once.
import { noteStream, queryStream, seededRandom, type Random } from "./corpus.js";
import { createTasks } from "./coordination.js";
import { expectStatus, latencyStats, progress, registerMany, round, startServerGroup, stopServerGroup, type Credentials, type HttpClient, type Reply, type Row, type Section, type ServerProcess } from "./lib.js";
import { holdsBetween, readHolds, summarise } from "./lock-holds.js";
import { benchDatabaseUrl, createDatabase, databaseUrl, dropDatabase } from "./postgres.js";

export interface LoadOptions {
  agents: number;
  seconds: number;
  warmupSeconds: number;
  /** Requests a second the agents offer together in the paced phase. */
  rate: number;
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

type StepKind = "search" | "write" | "task" | "message";
/**
 * The mix, dealt from a shuffled deck of twenty steps, so that every twenty steps hold exactly it:
 * drawn step by step, the requests of an 8-second phase varied by about 2 % around the rate.
 */
const DECK: StepKind[] = [...Array<StepKind>(8).fill("search"), ...Array<StepKind>(6).fill("write"), ...Array<StepKind>(3).fill("task"), ...Array<StepKind>(3).fill("message")];

/** Requests per step of the mix: a search or a write is one, a claim or a message two. */
const REQUESTS_PER_STEP = 0.4 + 0.3 + 0.3 * 2;

/** What was acknowledged over every phase, for the check that nothing was lost. */
interface Ledger {
  /** Entries acknowledged (201 new, 200 reinforced), by id. */
  written: Set<string>;
  claimed: Map<string, number>;
  completed: Map<string, number>;
  sent: Set<string>;
  delivered: Map<string, number>;
}

interface Tally {
  latencies: Record<Kind, number[]>;
  errors: Record<Kind, number>;
  /** Steps of the paced phase never sent: the server was too far behind (see drive). */
  unsent: number;
  ledger: Ledger;
}

const newLedger = (): Ledger => ({
  written: new Set(),
  claimed: new Map(),
  completed: new Map(),
  sent: new Set(),
  delivered: new Map(),
});

const newTally = (ledger: Ledger): Tally => ({
  latencies: Object.fromEntries(KINDS.map((kind) => [kind, []])) as unknown as Record<Kind, number[]>,
  errors: Object.fromEntries(KINDS.map((kind) => [kind, 0])) as Record<Kind, number>,
  unsent: 0,
  ledger,
});

const bump = (counts: Map<string, number>, id: string): void => void counts.set(id, (counts.get(id) ?? 0) + 1);

/**
 * One request of `kind`, timed into `tally` from `due` (when it should have started; now unless
 * given); a status other than `ok` counts as an error. Returns the reply when it was ok.
 */
async function timed(tally: Tally, kind: Kind, ok: number[], request: () => Promise<Reply>, started = performance.now()): Promise<Reply | null> {
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
  /** For the paced phase's arrivals and the deck's order. */
  random: Random;
  deck: StepKind[];
}

/** The next step's kind: the deck's next card, shuffled again once it is dealt. */
function nextStepKind(world: World): StepKind {
  if (world.deck.length === 0) {
    world.deck = [...DECK];
    for (let index = world.deck.length - 1; index > 0; index--) {
      const other = Math.floor(world.random() * (index + 1));
      [world.deck[index], world.deck[other]] = [world.deck[other] as StepKind, world.deck[index] as StepKind];
    }
  }
  return world.deck.pop() as StepKind;
}

/**
 * One step of an agent: a search, a write, a task claimed and completed, or a message sent and an
 * inbox read. The step's first request counts from `due`; a second one from when it is sent.
 */
async function step(world: World, agent: Agent, tally: Tally, due?: number): Promise<void> {
  const kind = nextStepKind(world);
  const as = agent.credentials;
  const { ledger } = tally;
  if (kind === "search") {
    await timed(tally, "search", [200], () => agent.client.get(`/memory/search?q=${encodeURIComponent(world.nextQuery())}&limit=10`, as), due);
  } else if (kind === "write") {
    const note = world.nextNote();
    const reply = await timed(tally, "write", [200, 201], () => agent.client.post("/memory", note, as), due);
    if (reply) ledger.written.add((JSON.parse(reply.body) as { id: string }).id);
  } else if (kind === "task" && world.nextTask < world.tasks.length) {
    const id = world.tasks[world.nextTask++] as string;
    if (!(await timed(tally, "claim", [200], () => agent.client.post(`/tasks/${id}/claim`, {}, as), due))) return;
    bump(ledger.claimed, id);
    if (await timed(tally, "complete", [200], () => agent.client.post(`/tasks/${id}/complete`, { output: { ok: true } }, as))) bump(ledger.completed, id);
  } else {
    const to = world.agents[Math.floor(agent.random() * world.agents.length)] as Agent;
    const sent = await timed(tally, "send", [201], () => agent.client.post("/messages", { to: to.credentials.agentId, body: `load message from ${as.agentId}` }, as), due);
    if (sent) ledger.sent.add((JSON.parse(sent.body) as { id: string }).id);
    const inbox = await timed(tally, "inbox", [200], () => agent.client.post("/messages/inbox/consume", { limit: 10 }, as));
    if (inbox) for (const message of JSON.parse(inbox.body) as { id: string }[]) bump(ledger.delivered, message.id);
  }
}

/**
 * Every agent steps until `seconds` have passed: without pause when `stepsPerSecond` is null, else
 * the phase's `stepsPerSecond` × `seconds` steps are due at uniformly random times, each to a
 * random agent (an agent whose step is late starts the next at once, and that step's latency
 * includes the wait).
 */
async function drive(world: World, seconds: number, tally: Tally, stepsPerSecond: number | null): Promise<number> {
  const started = performance.now();
  const deadline = started + seconds * 1000;
  if (stepsPerSecond === null) {
    await Promise.all(
      world.agents.map(async (agent) => {
        while (performance.now() < deadline) await step(world, agent, tally);
      }),
    );
    return performance.now() - started;
  }
  const dues: number[][] = world.agents.map(() => []);
  const times = Array.from({ length: Math.round(stepsPerSecond * seconds) }, () => started + world.random() * seconds * 1000).sort((a, b) => a - b);
  for (const due of times) dues[Math.floor(world.random() * world.agents.length)]?.push(due);
  await Promise.all(
    world.agents.map(async (agent, index) => {
      for (const due of dues[index] ?? []) {
        // A server far behind would keep the phase going for ever: what is still due once the
        // phase has run twice its length is counted, not sent.
        if (performance.now() > deadline + seconds * 1000) {
          tally.unsent++;
          continue;
        }
        const wait = due - performance.now();
        if (wait > 0) await new Promise((resolve) => setTimeout(resolve, wait));
        await step(world, agent, tally, due);
      }
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
async function check(world: World, servers: ServerProcess[], owner: Credentials, ledger: Ledger): Promise<Check> {
  const ids = [...ledger.written];
  let writesMissing = 0;
  for (let start = 0; start < ids.length; start += 32) {
    const replies = await Promise.all(ids.slice(start, start + 32).map((id, index) => (servers[index % servers.length] as ServerProcess).client.get(`/memory/${id}`, owner)));
    writesMissing += replies.filter((reply) => reply.status !== 200).length;
  }
  for (const agent of world.agents) {
    for (;;) {
      const reply = expectStatus("drain inbox", await agent.client.post("/messages/inbox/consume", { limit: 100 }, agent.credentials), 200);
      const messages = JSON.parse(reply.body) as { id: string }[];
      for (const message of messages) bump(ledger.delivered, message.id);
      if (messages.length === 0) break;
    }
  }
  const claimed = [...ledger.claimed.keys()];
  let stored = 0;
  for (const id of claimed) {
    const reply = await (servers[0] as ServerProcess).client.get(`/tasks/${id}`, owner);
    if (reply.status === 200 && (JSON.parse(reply.body) as { status: string }).status === "completed") stored++;
  }
  const sent = [...ledger.sent];
  return {
    writesMissing,
    tasksCompletedOnce: claimed.filter((id) => ledger.completed.get(id) === 1 && ledger.claimed.get(id) === 1).length,
    tasksNotCompleted: claimed.length - stored,
    tasksTwice: claimed.filter((id) => (ledger.claimed.get(id) ?? 0) > 1 || (ledger.completed.get(id) ?? 0) > 1).length,
    messagesDeliveredOnce: sent.filter((id) => ledger.delivered.get(id) === 1).length,
    messagesUndelivered: sent.filter((id) => !ledger.delivered.has(id)).length,
    messagesTwice: sent.filter((id) => (ledger.delivered.get(id) ?? 0) > 1).length,
  };
}

interface PhaseResult {
  rows: Row[];
  rate: number;
  worstP99: number;
  worstKind: Kind;
  errors: number;
  details: Record<string, unknown>;
}

/** One timed phase: rows per kind and for all kinds, with the servers' CPU per request. */
async function timedPhase(world: World, servers: ServerProcess[], onPostgres: boolean, seconds: number, ledger: Ledger, stepsPerSecond: number | null, label: string): Promise<PhaseResult> {
  const tally = newTally(ledger);
  const cpuBefore = servers.map((server) => server.cpuMs());
  const holdsBefore = onPostgres ? await readHolds(servers) : null;
  const wallMs = await drive(world, seconds, tally, stepsPerSecond);
  // The requests are those due within the phase (paced) or sent in it, over the time they took to
  // be answered: a server that keeps up answers the last of them a few milliseconds after the
  // phase; one that falls behind takes longer, up to twice the phase (see drive), and its rate is
  // what it answered in that time, not what was offered. Latencies count from when each was due.
  const spanMs = Math.max(wallMs, seconds * 1000);
  const cpuMs = servers.reduce((sum, server, index) => sum + server.cpuMs() - (cpuBefore[index] ?? 0), 0);
  // The events' lock (PostgreSQL): event-writing transactions commit one at a time, however many servers.
  const holds = onPostgres ? summarise(holdsBetween(holdsBefore, await readHolds(servers))) : null;
  const stats = Object.fromEntries(KINDS.map((kind) => [kind, latencyStats(tally.latencies[kind])])) as Record<Kind, ReturnType<typeof latencyStats>>;
  const requests = KINDS.reduce((sum, kind) => sum + stats[kind].n, 0);
  const rows: Row[] = KINDS.map((kind) => ({
    scenario: `${kind}, ${label}`,
    n: stats[kind].n,
    p50Ms: round(stats[kind].p50, 2),
    p95Ms: round(stats[kind].p95, 2),
    opsPerSec: round((stats[kind].n * 1000) / spanMs, 1),
    cpuMsPerOp: null,
    rssMb: null,
    note: `p99 ${round(stats[kind].p99, 1)} ms, ${tally.errors[kind]} errors`,
  }));
  const rss = servers.map((server) => Math.round(server.memory().rssMb));
  rows.push({
    scenario: `all, ${label}`,
    n: requests,
    p50Ms: null,
    p95Ms: null,
    opsPerSec: round((requests * 1000) / spanMs, 1),
    cpuMsPerOp: round(cpuMs / requests, 2),
    rssMb: rss.reduce((sum, value) => sum + value, 0),
    note: `server CPU per request over all kinds; RSS ${rss.join("+")} MB` + (tally.unsent > 0 ? `; ${tally.unsent} steps never sent (the servers were too far behind)` : "") + (holds ? `; events lock held p50 ${holds.p50Ms} p95 ${holds.p95Ms} mean ${holds.meanMs} ms over ${holds.transactions} transactions` : ""),
  });
  const measured = KINDS.filter((kind) => !Number.isNaN(stats[kind].p99));
  const worstKind = measured.reduce((worst, kind) => (stats[kind].p99 > stats[worst].p99 ? kind : worst), measured[0] ?? "search");
  return {
    rows,
    rate: (requests * 1000) / spanMs,
    worstP99: stats[worstKind].p99,
    worstKind,
    errors: KINDS.reduce((sum, kind) => sum + tally.errors[kind], 0),
    details: {
      wall_ms: round(wallMs, 0),
      server_cpu_ms: round(cpuMs, 0),
      events_lock: holds,
      p99_ms: Object.fromEntries(KINDS.map((kind) => [kind, round(stats[kind].p99, 1)])),
      errors: tally.errors,
      unsent_steps: tally.unsent,
    },
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
      random: seededRandom(Math.floor(random() * 2 ** 31)),
      deck: [],
    };
    const ledger = newLedger();
    progress(`load: ${options.agents} agents, ${options.warmupSeconds} s of warm-up`);
    await drive(world, options.warmupSeconds, newTally(ledger), null);
    const label = onPostgres ? `${count} servers, PostgreSQL` : "1 server, SQLite";
    progress(`load: ${options.seconds} s timed at ${options.rate} requests/s offered`);
    const paced = await timedPhase(world, servers, onPostgres, options.seconds, ledger, options.rate / REQUESTS_PER_STEP, `${options.rate}/s offered, ${label}`);
    progress(`load: ${options.seconds} s timed with no think time`);
    const saturated = await timedPhase(world, servers, onPostgres, options.seconds, ledger, null, `no think time, ${label}`);
    progress("load: checking that nothing was lost");
    const checked = await check(world, servers, owner, ledger);
    const lost = checked.writesMissing + checked.tasksNotCompleted + checked.tasksTwice + checked.messagesUndelivered + checked.messagesTwice;
    const errors = paced.errors + saturated.errors;
    const judged = (met: boolean): boolean | null => (onPostgres ? null : met);
    return {
      name: "load",
      title: `${options.agents} agents, 40 % search / 30 % write / 30 % tasks and messages — ${options.seconds} s at ${options.rate} requests/s offered (Poisson arrivals, latency from when each request was due), then ${options.seconds} s with no think time; ${label}`,
      rows: [...paced.rows, ...saturated.rows],
      targets: [
        // The steps due are exactly the rate's; their requests are within a deck's twenty steps of it.
        { what: `requests/s served at ${options.rate}/s offered (Poisson arrivals)`, goal: `≥ ${TARGET_RATE * 0.98}/s (98 % of ${TARGET_RATE})`, measured: `${round(paced.rate, 1)}/s`, met: judged(paced.rate >= TARGET_RATE * 0.98) },
        { what: `p99 of every kind at ${options.rate}/s offered`, goal: `≤ ${TARGET_P99_MS} ms`, measured: `${round(paced.worstP99, 1)} ms (worst: ${paced.worstKind})`, met: judged(paced.worstP99 <= TARGET_P99_MS) },
        { what: "requests/s with no think time (saturation)", goal: `≥ ${TARGET_RATE}/s`, measured: `${round(saturated.rate, 1)}/s, p99 worst ${round(saturated.worstP99, 1)} ms (${saturated.worstKind})`, met: judged(saturated.rate >= TARGET_RATE) },
        { what: "nothing lost (writes read back, tasks completed once, messages delivered once), no errors", goal: "0", measured: `${lost} lost, ${errors} errors`, met: lost === 0 && errors === 0 },
      ],
      details: {
        servers: count,
        paced: paced.details,
        no_think_time: saturated.details,
        writes_acknowledged: ledger.written.size,
        tasks_claimed: ledger.claimed.size,
        messages_sent: ledger.sent.size,
        check: checked,
      },
    };
  } finally {
    await stopServerGroup(started);
    if (database) await dropDatabase(database);
  }
}
