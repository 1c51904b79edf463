// The live event stream: fan-out delay to many subscribers under a steady write rate, and the time
// a client needs to catch up when it resumes far back in the log.
import http from "node:http";
import { join } from "node:path";
import { setTimeout as sleep } from "node:timers/promises";
import { createParser } from "eventsource-parser";
import { newId } from "../src/core/ids.js";
import { openStore } from "../src/store/open.js";
import { judge, latencyStats, newDataDir, progress, round, startServerGroup, stopServerGroup, withServer, type Credentials, type Row, type Section, type ServerProcess } from "./lib.js";
import { benchDatabaseUrl, createDatabase, databaseUrl, dropDatabase, ensureDatabase } from "./postgres.js";

export interface FanoutOptions {
  subscribers: number;
  writesPerSecond: number;
  seconds: number;
  /** The rate of the run across two servers (PostgreSQL): one a single server there sustains, so the delay measured is delivery's, not a queue's. */
  acrossWritesPerSecond: number;
}

export interface ReplayOptions {
  events: number;
}

interface Subscriber {
  /** Frames whose `data` holds a task id: when each arrived. */
  onFrame: (taskId: string, at: number) => void;
  dropped: boolean;
  close(): void;
}

/** A plain HTTP SSE client that hands each event's data to `onFrame` with the time its chunk arrived. */
export function subscribe(server: ServerProcess, as: Credentials, path: string, onFrame: (data: string, at: number) => void): Promise<{ response: http.IncomingMessage; close(): void }> {
  const url = new URL(path, server.url);
  return new Promise((resolve, reject) => {
    const request = http.get(url, { headers: { "X-Agent-ID": as.agentId, "X-API-Key": as.apiKey } }, (response) => {
      if (response.statusCode !== 200) {
        reject(new Error(`${path}: ${response.statusCode}`));
        return;
      }
      response.setEncoding("utf8");
      let at = 0;
      const parser = createParser({ onEvent: (event) => onFrame(event.data, at) });
      response.on("data", (chunk: string) => {
        at = performance.now();
        parser.feed(chunk);
      });
      resolve({ response, close: () => request.destroy() });
    });
    request.on("error", reject);
  });
}

const TASK_ID = /"task_id":"([0-9a-f-]{36})"/;

interface FanoutRun {
  /** Tasks written. */
  writes: number;
  /** 201 → delivery and request sent → delivery, one per delivery. */
  delays: number[];
  sendToDelivery: number[];
  beforeAck: number;
  rate: number;
  serverCpuMs: number;
  rssMb: number | null;
  dropped: number;
  expected: number;
  delivered: number;
  lateStarts: number;
}

/** Tasks written to `writing` at the options' rate, each delivered to every subscriber of `streaming` (the same server, or another on the same database). */
async function measureFanout(writing: ServerProcess, streaming: ServerProcess, options: FanoutOptions, label: string): Promise<FanoutRun> {
  const writer = await writing.client.registerAgent(`bench-writer-${label}`);
  const readers: Credentials[] = [];
  for (let index = 1; index <= options.subscribers; index++) readers.push(await writing.client.registerAgent(`bench-subscriber-${label}-${index}`));

  const acknowledged = new Map<string, { sent: number; acked: number }>();
  const early = new Map<string, number[]>();
  const delays: number[] = [];
  const sendToDelivery: number[] = [];
  let beforeAck = 0;
  let delivered = 0;
  const record = (taskId: string, at: number): void => {
    delivered++;
    const write = acknowledged.get(taskId);
    if (!write) {
      early.set(taskId, [...(early.get(taskId) ?? []), at]);
      return;
    }
    if (at < write.acked) beforeAck++;
    delays.push(Math.max(0, at - write.acked));
    sendToDelivery.push(at - write.sent);
  };
  const subscribers: Subscriber[] = [];
  for (const reader of readers) {
    const subscriber: Subscriber = { onFrame: record, dropped: false, close: () => undefined };
    const stream = await subscribe(streaming, reader, "/events/stream?type=task.created", (data, at) => {
      const taskId = TASK_ID.exec(data)?.[1];
      if (taskId) subscriber.onFrame(taskId, at);
    });
    stream.response.on("close", () => {
      subscriber.dropped = true;
    });
    subscriber.close = () => stream.close();
    subscribers.push(subscriber);
  }
  await sleep(500);

  const total = options.writesPerSecond * options.seconds;
  progress(`fanout (${label}): ${total} task writes at ${options.writesPerSecond}/s to ${options.subscribers} subscribers`);
  const interval = 1000 / options.writesPerSecond;
  const servers = writing === streaming ? [writing] : [writing, streaming];
  const cpu = (): number => servers.reduce((sum, server) => sum + server.cpuMs(), 0);
  const started = performance.now();
  const cpuBefore = cpu();
  const writes: Promise<void>[] = [];
  let lateStarts = 0;
  for (let index = 0; index < total; index++) {
    const due = started + index * interval;
    const wait = due - performance.now();
    if (wait > 1) await sleep(wait);
    else if (wait < -interval) lateStarts++;
    const sent = performance.now();
    writes.push(
      writing.client.post("/tasks", { title: `fan-out task ${index}` }, writer).then((reply) => {
        if (reply.status !== 201) throw new Error(`POST /tasks: ${reply.status} ${reply.body}`);
        const acked = performance.now();
        const taskId = (JSON.parse(reply.body) as { id: string }).id;
        acknowledged.set(taskId, { sent, acked });
        for (const at of early.get(taskId) ?? []) {
          beforeAck++;
          delays.push(0);
          sendToDelivery.push(at - sent);
        }
        early.delete(taskId);
      }),
    );
  }
  await Promise.all(writes);
  const wallMs = performance.now() - started;
  const expected = total * options.subscribers;
  const deadline = performance.now() + 10_000;
  while (delivered < expected && performance.now() < deadline) await sleep(20);
  const serverCpuMs = cpu() - cpuBefore;
  const dropped = subscribers.filter((subscriber) => subscriber.dropped).length;
  for (const subscriber of subscribers) subscriber.close();
  return {
    writes: total,
    delays,
    sendToDelivery,
    beforeAck,
    rate: round((total * 1000) / wallMs, 1),
    serverCpuMs,
    rssMb: streaming.memory().rssMb,
    dropped,
    expected,
    delivered,
    lateStarts,
  };
}

function fanoutRows(run: FanoutRun, subscribers: number, where: string): Row[] {
  const stats = latencyStats(run.delays);
  const fromSend = latencyStats(run.sendToDelivery);
  return [
    {
      scenario: `201 → delivery, ${subscribers} subscribers${where}`,
      n: stats.n,
      p50Ms: round(stats.p50, 2),
      p95Ms: round(stats.p95, 2),
      opsPerSec: run.rate,
      cpuMsPerOp: round(run.serverCpuMs / run.writes, 2),
      rssMb: run.rssMb,
      note: `p99 ${round(stats.p99, 1)} ms, max ${round(stats.max, 1)} ms; ${run.beforeAck} arrived before the 201`,
    },
    {
      scenario: `request sent → delivery${where}`,
      n: fromSend.n,
      p50Ms: round(fromSend.p50, 2),
      p95Ms: round(fromSend.p95, 2),
      opsPerSec: null,
      cpuMsPerOp: null,
      rssMb: null,
      note: `p99 ${round(fromSend.p99, 1)} ms`,
    },
  ];
}

const runDetails = (run: FanoutRun): Record<string, number> => ({
  deliveries_expected: run.expected,
  deliveries_received: run.delivered,
  write_rate_achieved: run.rate,
  writes_started_late: run.lateStarts,
  server_cpu_ms_per_write: round(run.serverCpuMs / run.writes, 2),
});

/**
 * With BENCH_DATABASE_URL, the same fan-out with its writes sent to one server and its
 * subscribers on another of the same database: what a change's trip between servers adds (the
 * writer's commit notifies the others, which read the new events; docs/architecture.md).
 */
async function acrossServers(options: FanoutOptions): Promise<FanoutRun> {
  const database = await createDatabase();
  const started: ServerProcess[] = [];
  try {
    const [writing, streaming] = (await startServerGroup(2, { DATABASE_URL: databaseUrl(database) }, 16, started)) as [ServerProcess, ServerProcess];
    return await measureFanout(writing, streaming, { ...options, writesPerSecond: options.acrossWritesPerSecond }, "across");
  } finally {
    await stopServerGroup(started);
    await dropDatabase(database);
  }
}

export async function runFanoutBench(options: FanoutOptions): Promise<Section> {
  const local = await withServer(newDataDir(), 16, async (server) => {
    await server.waitForHealth();
    return measureFanout(server, server, options, "one");
  });
  const across = benchDatabaseUrl() ? await acrossServers(options) : null;
  const fromSend = latencyStats(local.sendToDelivery);
  const acrossFromSend = across ? latencyStats(across.sendToDelivery) : null;
  const dropped = local.dropped + (across?.dropped ?? 0);
  return {
    name: "fanout",
    title: `Event fan-out — ${options.writesPerSecond} writes/s (POST /tasks) for ${options.seconds} s, ${options.subscribers} SSE subscribers${across ? `; then ${options.acrossWritesPerSecond} writes/s to one server with the subscribers on another of the same PostgreSQL database` : ""}`,
    rows: [...fanoutRows(local, options.subscribers, ""), ...(across ? fanoutRows(across, options.subscribers, `, across two servers at ${options.acrossWritesPerSecond}/s`) : [])],
    // Delivery usually precedes the 201 (subscribers are written to as the change commits, the
    // response after), so the target is judged on the stricter request-sent → delivery delay.
    targets: [
      {
        what: "p99 delay to delivery (request sent → delivery; bounds 201 → delivery)",
        goal: "≤ 50 ms",
        measured: `${round(fromSend.p99, 1)} ms (201 → delivery p99 ${round(latencyStats(local.delays).p99, 1)} ms)`,
        met: judge(fromSend.p99, (p99) => p99 <= 50),
      },
      // CONTRACT.md names no bound for a subscriber on another server; reported, not judged.
      ...(acrossFromSend ? [{ what: "p99 delay to delivery on another server (request sent → delivery)", goal: "reported", measured: `${round(acrossFromSend.p99, 1)} ms`, met: null }] : []),
      { what: "dropped streams", goal: "0", measured: String(dropped), met: dropped === 0 },
    ],
    details: across ? { ...runDetails(local), across_servers: runDetails(across) } : runDetails(local),
  };
}

/** Seeds `count` global custom events straight into a fresh database, as a long-running server would have them. */
async function seedEvents(dataDir: string, count: number): Promise<void> {
  const databaseUrl = benchDatabaseUrl() ? await ensureDatabase(dataDir) : undefined;
  const store = await openStore({ databaseUrl, file: join(dataDir, "cairn.db") });
  try {
    const createdAt = new Date().toISOString();
    await store.transaction(async (tx) => {
      for (let index = 0; index < count; index++) {
        await store.events.insert(tx, {
          id: newId(),
          type: "bench.seeded",
          agent_id: "bench-history",
          project: null,
          private_to: null,
          payload: JSON.stringify({ n: index, note: "an event from the history the client missed" }),
          created_at: createdAt,
        });
      }
    });
  } finally {
    await store.close();
  }
}

export async function runReplayBench(options: ReplayOptions): Promise<Section> {
  const dataDir = newDataDir();
  progress(`replay: seeding ${options.events.toLocaleString("en")} events`);
  await seedEvents(dataDir, options.events);
  return withServer(dataDir, 4, async (server) => {
    await server.waitForHealth();
    const agent = await server.client.registerAgent("bench-resumer");
    const rows: Row[] = [];
    const samples: number[] = [];
    let peakRss = 0;
    for (let run = 0; run < 3; run++) {
      let received = 0;
      const started = performance.now();
      const cpuBefore = server.cpuMs();
      let caughtUp = 0;
      const done = new Promise<void>((resolve) => {
        void subscribe(server, agent, "/events/stream?last_event_id=0", () => {
          received++;
          if (received === options.events) {
            caughtUp = performance.now() - started;
            resolve();
          }
        }).then((stream) => done.then(() => stream.close()));
      });
      const sampler = setInterval(() => {
        peakRss = Math.max(peakRss, server.memory().rssMb);
      }, 100);
      await done;
      clearInterval(sampler);
      samples.push(caughtUp);
      rows.push({
        scenario: `resume ${options.events.toLocaleString("en")} events back, run ${run + 1}`,
        n: options.events,
        p50Ms: round(caughtUp, 0),
        p95Ms: null,
        opsPerSec: round((options.events * 1000) / caughtUp, 0),
        cpuMsPerOp: round((server.cpuMs() - cpuBefore) / options.events, 3),
        rssMb: server.memory().rssMb,
        note: "p50 column: ms until the last event arrived",
      });
      await sleep(300);
    }
    const best = Math.min(...samples);
    return {
      name: "replay",
      title: `Stream resume — Last-Event-ID ${options.events.toLocaleString("en")} events back, replayed then live`,
      rows,
      targets: [],
      details: { catch_up_ms: samples.map((value) => round(value, 0)), best_ms: round(best, 0), peak_rss_mb: peakRss },
    };
  });
}
