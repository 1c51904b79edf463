// Coordination primitives under load: claiming tasks, sending and reading messages, and starting
// a session with a large memory delta. Each benchmark gets a fresh server and data directory.
import { noteStream, seededRandom } from "./corpus.js";
import { expectStatus, judge, newDataDir, progress, registerMany, round, rowOf, runClients, withServer, type Credentials, type Row, type Section, type ServerProcess } from "./lib.js";

export interface ClaimOptions {
  agents: number;
  tasks: number;
}

export interface MessageOptions {
  agents: number;
  seeded: number;
  timed: number;
  concurrentClients: number;
}

export interface HandoffOptions {
  changedEntries: number;
  loads: number;
}

/** Creates `count` tasks with `clients` concurrent requests; returns their ids in creation order. */
export async function createTasks(server: ServerProcess, creator: Credentials, count: number, clients: number): Promise<string[]> {
  const ids: string[] = new Array<string>(count);
  await runClients(server, clients, count, async (index) => {
    const reply = await server.client.post("/tasks", { title: `bench task ${index}`, priority: ["low", "normal", "high"][index % 3] }, creator);
    ids[index] = (JSON.parse(expectStatus("POST /tasks", reply, 201).body) as { id: string }).id;
  });
  return ids;
}

/**
 * 20 agents work through 2,000 open tasks: each claims the next one off a shared queue (the
 * claims are timed), and completes it. A second run has all agents race for the same tasks, so
 * most claims lose (409) and the winner's claim still has to be atomic.
 */
export async function runClaimBench(options: ClaimOptions): Promise<Section> {
  return withServer(newDataDir(), options.agents, async (server) => {
    await server.waitForHealth();
    const owner = server.owner();
    const agents = await registerMany(server, "bench-worker", options.agents);
    progress(`claim: creating ${options.tasks} tasks`);
    const tasks = await createTasks(server, owner, options.tasks, 8);

    progress(`claim: ${options.agents} agents claim and complete ${options.tasks} tasks`);
    const completions: number[] = [];
    const claims = await runClients(server, options.agents, options.tasks, async (index, client) => {
      const agent = agents[client] as Credentials;
      const task = tasks[index] as string;
      expectStatus("claim", await server.client.post(`/tasks/${task}/claim`, {}, agent), 200);
      const started = performance.now();
      expectStatus("complete", await server.client.post(`/tasks/${task}/complete`, { output: { ok: true } }, agent), 200);
      completions.push(performance.now() - started);
    });
    // runClients timed claim + complete; take the completes out so the claim row is claims alone.
    const claimOnly = claims.latencies.map((total, index) => total - (completions[index] ?? 0));

    progress(`claim: ${options.agents} agents race for each of 100 tasks`);
    const raced = await createTasks(server, owner, 100, 8);
    const outcomes: Record<string, number> = {};
    const race = await runClients(server, options.agents, raced.length * options.agents, async (index, client) => {
      const reply = await server.client.post(`/tasks/${raced[Math.floor(index / options.agents)] as string}/claim`, {}, agents[client]);
      outcomes[reply.status] = (outcomes[reply.status] ?? 0) + 1;
    });

    const claimRow = rowOf(`claim, ${options.agents} agents, no contention`, { ...claims, latencies: claimOnly }, server.memory().rssMb);
    const completeRow = rowOf(`complete, ${options.agents} agents`, { ...claims, latencies: completions }, server.memory().rssMb);
    // Claims and completes shared the wall time; throughput is of the claim-and-complete cycle.
    completeRow.note = `claim+complete cycles/s ${claimRow.opsPerSec}`;
    claimRow.note = "ops/s counts claim+complete cycles";
    const raceRow = rowOf(`claim race, ${options.agents} agents per task`, race, server.memory().rssMb, `${outcomes["200"] ?? 0}×200, ${outcomes["409"] ?? 0}×409`);
    return {
      name: "claim",
      title: `Task claims — ${options.tasks.toLocaleString("en")} tasks, ${options.agents} concurrent agents`,
      rows: [claimRow, completeRow, raceRow],
      targets: [
        {
          what: `claim p95, ${options.agents} agents over ${options.tasks.toLocaleString("en")} tasks`,
          goal: "≤ 20 ms",
          measured: `${claimRow.p95Ms} ms`,
          met: judge(claimRow.p95Ms, (p95) => p95 <= 20),
        },
      ],
      details: { race_statuses: outcomes },
    };
  });
}

/**
 * 50 agents with 10,000 messages in the store (mostly direct, some broadcast and project-wide),
 * then timed sends and inbox reads, sequentially and from 50 concurrent clients.
 */
export async function runMessageBench(options: MessageOptions): Promise<Section> {
  return withServer(newDataDir(), options.concurrentClients, async (server) => {
    await server.waitForHealth();
    const agents = await registerMany(server, "bench-mail", options.agents);
    const team = agents.slice(0, Math.ceil(agents.length / 2));
    expectStatus("POST /projects", await server.client.post("/projects", { name: "mailroom" }, team[0]), 201);
    for (const member of team.slice(1)) expectStatus("join", await server.client.post("/projects/mailroom/join", {}, member), 200);

    const random = seededRandom(4001);
    const pickAgent = (): Credentials => agents[Math.floor(random() * agents.length)] as Credentials;
    const message = (index: number): { from: Credentials; body: Record<string, unknown> } => {
      const from = pickAgent();
      const roll = random();
      const body = { subject: `status ${index}`, body: `Progress note ${index}: the migration for shard ${index % 64} is done, next is the backfill.` };
      if (roll < 0.02) return { from, body: { ...body, to: "broadcast" } };
      if (roll < 0.05 && team.includes(from)) return { from, body: { ...body, to: "project:mailroom" } };
      let to = pickAgent();
      while (to === from) to = pickAgent();
      return { from, body: { ...body, to: to.agentId } };
    };
    const send = async (index: number): Promise<void> => {
      const { from, body } = message(index);
      expectStatus("POST /messages", await server.client.post("/messages", body, from), 201);
    };

    progress(`messages: seeding ${options.seeded.toLocaleString("en")} messages`);
    await runClients(server, 8, options.seeded, send);
    const inbox = async (index: number): Promise<void> => {
      expectStatus("GET /messages/inbox", await server.client.get("/messages/inbox", agents[index % agents.length]), 200);
    };
    progress("messages: timed sends and inbox reads");
    const rows = [];
    for (const clients of [1, options.concurrentClients]) {
      const label = clients === 1 ? "1 client" : `${clients} concurrent clients`;
      const sends = await runClients(server, clients, options.timed, (index) => send(options.seeded + index));
      rows.push(rowOf(`POST /messages, ${label}`, sends, server.memory().rssMb));
      const reads = await runClients(server, clients, options.timed, (index, client) => inbox(clients === 1 ? index : client));
      rows.push(rowOf(`GET /messages/inbox, ${label}`, reads, server.memory().rssMb));
    }
    const consumed = await consumeQueue(server, agents, options.timed);
    rows.push(consumed.row);
    const [sendOne, inboxOne] = rows;
    const total = options.seeded + 2 * options.timed;
    return {
      name: "messages",
      title: `Messages — ${options.agents} agents, ${options.seeded.toLocaleString("en")} messages seeded (${total.toLocaleString("en")} at the end)`,
      rows,
      targets: [
        { what: "POST /messages p95, 1 client", goal: "≤ 15 ms", measured: `${sendOne?.p95Ms} ms`, met: judge(sendOne?.p95Ms, (p95) => p95 <= 15) },
        { what: "GET /messages/inbox p95, 1 client", goal: "≤ 15 ms", measured: `${inboxOne?.p95Ms} ms`, met: judge(inboxOne?.p95Ms, (p95) => p95 <= 15) },
      ],
      details: { inbox_page: 50, project_members: team.length, consume: consumed.details },
    };
  });
}

const CONSUMERS = 8;
const CONSUME_BATCH = 10;

/**
 * One inbox drained as a work queue: `count` messages to one agent, taken by CONSUMERS clients
 * at once with `POST /messages/inbox/consume {limit: 10}` until it is empty. Each message should
 * reach exactly one of them; how many were handed out twice is reported.
 */
async function consumeQueue(server: ServerProcess, agents: Credentials[], count: number): Promise<{ row: Row; details: Record<string, number> }> {
  const queue = (await registerMany(server, "bench-queue", 1))[0] as Credentials;
  progress(`messages: ${count} messages to one inbox, consumed by ${CONSUMERS} clients`);
  await runClients(server, 8, count, async (index) => {
    const from = agents[index % agents.length] as Credentials;
    expectStatus("POST /messages", await server.client.post("/messages", { to: queue.agentId, body: `job ${index}` }, from), 201);
  });
  const taken: string[] = [];
  let empty = 0;
  const calls = Math.ceil(count / CONSUME_BATCH) + CONSUMERS * 4;
  const run = await runClients(server, CONSUMERS, calls, async () => {
    if (empty >= CONSUMERS) return;
    const reply = expectStatus("POST /messages/inbox/consume", await server.client.post("/messages/inbox/consume", { limit: CONSUME_BATCH }, queue), 200);
    const batch = JSON.parse(reply.body) as { id: string }[];
    if (batch.length === 0) empty += 1;
    taken.push(...batch.map((message) => message.id));
  });
  const distinct = new Set(taken).size;
  return {
    row: rowOf(`POST /messages/inbox/consume (limit ${CONSUME_BATCH}), ${CONSUMERS} clients on one inbox`, run, server.memory().rssMb),
    details: { messages: count, handed_out: taken.length, distinct, handed_out_twice: taken.length - distinct, messages_per_second: round((distinct * 1000) / run.wallMs, 1) },
  };
}

/**
 * One agent ends a session, a teammate changes `changedEntries` entries, and the agent starts the
 * next session: GET /sessions/handoff?peek=true, timed repeatedly (peek keeps the cursor, so every
 * call sees the same delta).
 */
export async function runHandoffBench(options: HandoffOptions): Promise<Section> {
  return withServer(newDataDir(), 4, async (server) => {
    await server.waitForHealth((health) => health.embeddings === "ready");
    const [agent, teammate] = (await registerMany(server, "bench-session", 2)) as [Credentials, Credentials];
    expectStatus("handoff", await server.client.post("/sessions/handoff", { summary: "Benchmark session", next_steps: ["measure"] }, agent), 201);
    expectStatus("start", await server.client.get("/sessions/handoff", agent), 200);
    progress(`handoff: writing ${options.changedEntries} entries`);
    const notes = noteStream(5001);
    await runClients(server, 4, options.changedEntries, async () => {
      const note = notes();
      const reply = await server.client.post("/memory", { content: note.content, tags: note.tags, allow_duplicate: true }, teammate);
      if (reply.status !== 201) throw new Error(`POST /memory: ${reply.status} ${reply.body}`);
    });
    for (let index = 0; index < 20; index++) {
      expectStatus("message", await server.client.post("/messages", { to: agent.agentId, body: `note ${index}` }, teammate), 201);
    }
    let pack = { delta: 0, truncated: false, bytes: 0 };
    const loads = await runClients(server, 1, options.loads, async () => {
      const reply = expectStatus("GET /sessions/handoff", await server.client.get("/sessions/handoff?peek=true", agent), 200);
      const body = JSON.parse(reply.body) as { memory_delta_since_last_seen: unknown[]; delta_truncated: boolean };
      pack = { delta: body.memory_delta_since_last_seen.length, truncated: body.delta_truncated, bytes: reply.body.length };
    });
    const row = rowOf(
      `GET /sessions/handoff, ${options.changedEntries.toLocaleString("en")} changed entries`,
      loads,
      server.memory().rssMb,
      `delta ${pack.delta}${pack.truncated ? " (truncated)" : ""}, ${Math.round(pack.bytes / 1024)} KiB`,
    );
    return {
      name: "handoff",
      title: "Session start — one call returns handoff, memory delta, unread messages, claimed tasks, directives",
      rows: [row],
      targets: [],
      details: { changed_entries: options.changedEntries, delta_entries_returned: pack.delta, response_bytes: pack.bytes },
    };
  });
}
