import { hostname } from "node:os";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { ServeProcess } from "../helpers/cli.js";
import { onPostgres } from "../helpers/database.js";
import { eventsAfter, startGroup, type EventRecord, type Get, type Group } from "../helpers/group.js";
import type { Credentials, Response } from "../helpers/server.js";
import { openStream, type OpenStream } from "../helpers/stream.js";
import { eventually } from "../helpers/wait.js";

/**
 * Several `cairn serve` processes on one PostgreSQL database keep every promise one server keeps:
 * a claim has one winner, a stream on one server sees what the others write (in order, once) and
 * resumes on any of them, an idempotency key holds across them, one archivist works, and a server
 * killed mid-write loses nothing it acknowledged. (On SQLite a database has one server: there is
 * nothing to test.)
 */

const RATE_LIMIT = 600;

async function lastSeq(get: Get, as: Credentials): Promise<number> {
  const page = await get<EventRecord[]>("/events?since=seq:0&order=desc&limit=1", { as });
  return page.body[0]?.seq ?? 0;
}

/** Waits until `stream` has received the event `marker` posted (a test.sentinel with that payload). */
async function sentinelReached(stream: OpenStream, marker: string): Promise<boolean> {
  return eventually(() => stream.received.some((event) => event.type === "test.sentinel" && event.payload.marker === marker), 30_000);
}

const seqsOf = (events: { seq: number }[]): number[] => events.map((event) => event.seq);

describe.runIf(onPostgres)("three servers on one PostgreSQL database", () => {
  let group: Group;

  beforeAll(async () => {
    group = await startGroup(3, () => ({ RATE_LIMIT_PER_MINUTE: String(RATE_LIMIT) }));
  }, 120_000);

  afterAll(async () => {
    await group?.stop();
  });

  it("hold an agent to one rate limit however its requests are spread over them", async () => {
    const agent = await group.agent("busy-agent", 0);
    const started = performance.now();
    // In rounds of one request to each server at once, so each sees the bucket run dry. A third more
    // than the limit: the bucket refills while the rounds run (by a tenth of the limit over six
    // seconds), and a slow machine must still leave every server refusing some.
    const statuses: number[] = [];
    for (let round = 0; round < (RATE_LIMIT + RATE_LIMIT / 3) / 3; round++) {
      statuses.push(...(await Promise.all([0, 1, 2].map(async (index) => (await group.on(index)("/agents/me", { as: agent })).status))));
    }
    const seconds = (performance.now() - started) / 1000;
    const allowed = statuses.filter((status) => status === 200).length;
    expect(allowed + statuses.filter((status) => status === 429).length).toBe(statuses.length);
    expect(allowed).toBeGreaterThanOrEqual(RATE_LIMIT);
    // The bucket refills at RATE_LIMIT a minute while the requests run; each server alone would allow RATE_LIMIT.
    expect(allowed).toBeLessThanOrEqual(RATE_LIMIT + Math.ceil((seconds * RATE_LIMIT) / 60));
    // Every server refused some: none of them counted alone.
    for (const index of [0, 1, 2]) expect(statuses.filter((status, at) => at % 3 === index && status === 429).length).toBeGreaterThan(0);
  });

  it("count wrong keys for an agent id together: twenty spread over the three lock it on all of them", async () => {
    const agent = await group.agent("guessed-agent", 1);
    for (let attempt = 0; attempt < 20; attempt++) {
      expect((await group.on(attempt % 3)("/agents/me", { as: { agentId: agent.agentId, apiKey: `cairn_wrong_${attempt}` } })).status).toBe(401);
    }
    for (const index of [0, 1, 2]) expect((await group.on(index)("/agents/me", { as: agent })).status).toBe(429);
  });

  it("give each of 50 tasks to exactly one of six agents claiming it at once through all three", async () => {
    const agents = await Promise.all(Array.from({ length: 6 }, (_, index) => group.agent(`claimer-${index}`, index % 3)));
    const tasks = await Promise.all(
      Array.from({ length: 50 }, async (_, index) => {
        const created = await group.on(index % 3)<{ id: string }>("/tasks", { as: group.owner, body: { title: `contested task ${index}` } });
        expect(created.status).toBe(201);
        return created.body.id;
      }),
    );
    const outcomes = await Promise.all(
      tasks.map((id) =>
        Promise.all(agents.map(async (agent, index) => ({ agent: agent.agentId, status: (await group.on(index % 3)(`/tasks/${id}/claim`, { as: agent, method: "POST", body: {} })).status }))),
      ),
    );
    for (const [index, claims] of outcomes.entries()) {
      const winners = claims.filter((claim) => claim.status === 200);
      expect(winners, `task ${index}`).toHaveLength(1);
      expect(claims.filter((claim) => claim.status === 409)).toHaveLength(5);
      const stored = await group.on((index + 1) % 3)<{ status: string; assigned_to: string }>(`/tasks/${tasks[index]}`, { as: group.owner });
      expect(stored.body).toMatchObject({ status: "claimed", assigned_to: winners[0]?.agent });
    }
    const claimed = (await eventsAfter(group.on(2), group.owner, 0, "task.claimed")).filter((event) => tasks.includes(String(event.payload.task_id)));
    expect(claimed).toHaveLength(50);
    expect(new Set(claimed.map((event) => event.payload.task_id)).size).toBe(50);
  });

  it("finish a task once when its assignee completes it through two servers and fails it through the third at once", async () => {
    const worker = await group.agent("finisher", 2);
    const tasks = await Promise.all(
      Array.from({ length: 20 }, async (_, index) => {
        const created = await group.on(index % 3)<{ id: string }>("/tasks", { as: worker, body: { title: `finished once ${index}` } });
        expect((await group.on(index % 3)(`/tasks/${created.body.id}/claim`, { as: worker, method: "POST", body: {} })).status).toBe(200);
        return created.body.id;
      }),
    );
    const outcomes = await Promise.all(
      tasks.map((id) =>
        Promise.all([
          group.on(0)(`/tasks/${id}/complete`, { as: worker, method: "POST", body: {} }),
          group.on(1)(`/tasks/${id}/complete`, { as: worker, method: "POST", body: {} }),
          group.on(2)(`/tasks/${id}/fail`, { as: worker, method: "POST", body: {} }),
        ]),
      ),
    );
    for (const [index, answers] of outcomes.entries()) {
      const statuses = answers.map((answer) => answer.status);
      expect(statuses.filter((status) => status === 200), `task ${index}: ${statuses.join(", ")}`).toHaveLength(1);
      expect(statuses.filter((status) => status === 409)).toHaveLength(2);
      const winner = answers.findIndex((answer) => answer.status === 200);
      const stored = await group.on(index % 3)<{ status: string }>(`/tasks/${tasks[index]}`, { as: worker });
      expect(stored.body.status).toBe(winner === 2 ? "failed" : "completed");
    }
    const finished = (await eventsAfter(group.on(1), worker, 0, "task.*")).filter(
      (event) => ["task.completed", "task.failed"].includes(event.type) && tasks.includes(String(event.payload.task_id)),
    );
    expect(finished).toHaveLength(20);
  });

  it("stream on one server every visible event it and the others write, in order, once", async () => {
    const watcher = await group.agent("stream-watcher", 0);
    // The writer on the watcher's own server has its events handed on as they commit, between the others' read from the log.
    const writers = await Promise.all([group.agent("stream-writer-0", 0), group.agent("stream-writer-1", 1), group.agent("stream-writer-2", 2)]);
    const stream = openStream(group.servers[0] as ServeProcess, watcher);
    try {
      await stream.opened;
      const start = await lastSeq(group.on(0), watcher);
      const hidden: string[] = [];
      // Four chains a writer, so that commits on the three servers interleave closely.
      const chains = writers.flatMap((writer, index) => [0, 1, 2, 3].map((chain) => ({ writer, index, chain })));
      await Promise.all(
        chains.map(async ({ writer, index, chain }) => {
          const post = group.on(index);
          for (let n = chain; n < 40; n += 4) {
            const shared = await post<{ id: string }>("/memory", { as: writer, body: { content: `streamed note ${n} from writer ${index}`, allow_duplicate: true } });
            expect(shared.status).toBe(201);
            const task = await post("/tasks", { as: writer, body: { title: `streamed task ${n} from writer ${index}` } });
            expect(task.status).toBe(201);
            if (n % 4 === 0) {
              const mine = await post<{ id: string }>("/memory", { as: writer, body: { content: `private note ${n} of writer ${index}`, scope: "agent", allow_duplicate: true } });
              expect(mine.status).toBe(201);
              hidden.push(mine.body.id);
            }
          }
        }),
      );
      const marker = "end of the writes";
      expect((await group.on(2)("/events", { as: writers[2], body: { type: "test.sentinel", payload: { marker } } })).status).toBe(201);
      expect(await sentinelReached(stream, marker)).toBe(true);

      const streamed = stream.received.filter((event) => event.seq > start);
      const logged = await eventsAfter(group.on(1), watcher, start);
      expect(seqsOf(streamed)).toEqual(seqsOf(logged));
      expect(streamed.length).toBeGreaterThanOrEqual(241);
      for (const [index, event] of streamed.entries()) {
        expect(event.lastEventId).toBe(String(event.seq));
        if (index > 0) expect(event.seq).toBeGreaterThan((streamed[index - 1] as { seq: number }).seq);
      }
      const seen = JSON.stringify(streamed);
      for (const id of hidden) expect(seen).not.toContain(id);
    } finally {
      stream.close();
    }
  });

  it("resume on another server from Last-Event-ID with no gap and no duplicate", async () => {
    const reader = await group.agent("resuming-reader", 0);
    const writer = await group.agent("resume-writer", 1);
    const first = openStream(group.servers[0] as ServeProcess, reader);
    await first.opened;
    const start = await lastSeq(group.on(0), reader);
    let writing = true;
    // Two writers at once, through the other two servers: their transactions overlap.
    const writes = Promise.all(
      [1, 2].map(async (index) => {
        for (let n = 0; writing || n < 60; n++) {
          expect((await group.on(index)("/memory", { as: writer, body: { content: `resumed note ${n} via ${index}`, allow_duplicate: true } })).status).toBe(201);
        }
      }),
    );
    expect(await eventually(() => first.received.filter((event) => event.seq > start).length >= 15, 30_000)).toBe(true);
    first.close();
    const before = first.received.filter((event) => event.seq > start);
    const resumedFrom = (before.at(-1) as { seq: number }).seq;
    const second = openStream(group.servers[2] as ServeProcess, reader, { lastEventId: resumedFrom });
    try {
      await second.opened;
      writing = false;
      await writes;
      const marker = "resumed to the end";
      expect((await group.on(1)("/events", { as: writer, body: { type: "test.sentinel", payload: { marker } } })).status).toBe(201);
      expect(await sentinelReached(second, marker)).toBe(true);
      const joined = [...before, ...second.received];
      const logged = await eventsAfter(group.on(1), reader, start);
      expect(seqsOf(joined)).toEqual(seqsOf(logged));
      expect(second.received[0]?.seq).toBeGreaterThan(resumedFrom);
    } finally {
      second.close();
    }
  });

  it("replay an idempotency key's first answer on another server, and act once when all three get it at once", async () => {
    const agent = await group.agent("idempotent-agent", 0);
    const body = { title: "created once across servers" };
    const first = await group.on(0)<{ id: string }>("/tasks", { as: agent, body, headers: { "idempotency-key": "across-1" } });
    expect(first.status).toBe(201);
    const replayed = await group.on(1)<{ id: string }>("/tasks", { as: agent, body, headers: { "idempotency-key": "across-1" } });
    expect(replayed.status).toBe(201);
    expect(replayed.headers.get("idempotent-replayed")).toBe("true");
    expect(replayed.body).toEqual(first.body);
    const changed = await group.on(2)("/tasks", { as: agent, body: { title: "another request" }, headers: { "idempotency-key": "across-1" } });
    expect(changed.status).toBe(422);

    const raced = { title: "raced on three servers at once" };
    const answers = await Promise.all(
      Array.from({ length: 9 }, (_, index) => group.on(index % 3)<{ id: string }>("/tasks", { as: agent, body: raced, headers: { "idempotency-key": "across-2" } })),
    );
    for (const answer of answers) expect(answer.status).toBe(201);
    expect(new Set(answers.map((answer) => answer.body.id)).size).toBe(1);
    expect(answers.filter((answer) => answer.headers.get("idempotent-replayed") === null)).toHaveLength(1);
    const listed = await group.on(2)<{ title: string }[]>("/tasks?limit=200", { as: agent });
    expect(listed.body.filter((task) => task.title === raced.title)).toHaveLength(1);
  });
});

describe.runIf(onPostgres)("a server killed mid-write beside two others", () => {
  let group: Group;

  beforeAll(async () => {
    group = await startGroup(3);
  }, 120_000);

  afterAll(async () => {
    await group?.stop();
  });

  it("loses nothing it acknowledged, and the others go on", async () => {
    const writers = await Promise.all([0, 1, 2].map((index) => group.agent(`survivor-${index}`, index)));
    const watcher = await group.agent("kill-watcher", 0);
    const stream = openStream(group.servers[0] as ServeProcess, watcher);
    await stream.opened;
    const acknowledged: { id: string; server: number }[] = [];
    let killed = false;
    const keepWriting = async (index: number, clients: number): Promise<void> => {
      await Promise.all(
        Array.from({ length: clients }, async (_, client) => {
          for (let n = 0; ; n++) {
            if (killed && index !== 1 && n > 400) return;
            let answer: Response<{ id: string }>;
            try {
              answer = await group.on(index)<{ id: string }>("/memory", {
                as: writers[index] as Credentials,
                body: { content: `write ${n} of client ${client} on server ${index}`, allow_duplicate: true },
              });
            } catch {
              // The killed server: its connection reset. Nothing is known of this write.
              expect(index).toBe(1);
              return;
            }
            expect(answer.status, answer.text).toBe(201);
            acknowledged.push({ id: answer.body.id, server: index });
            if (killed && index !== 1 && n > 30) return;
          }
        }),
      );
    };
    const writing = [keepWriting(0, 2), keepWriting(1, 4), keepWriting(2, 2)];
    expect(await eventually(() => acknowledged.filter((write) => write.server === 1).length >= 40, 30_000)).toBe(true);
    const victim = group.servers[1] as ServeProcess;
    killed = true;
    const ended = await victim.kill();
    expect(ended.code).toBeNull();
    await Promise.all(writing);

    const afterKill = acknowledged.length;
    const marker = "after the kill";
    expect((await group.on(2)("/events", { as: writers[2] as Credentials, body: { type: "test.sentinel", payload: { marker } } })).status).toBe(201);
    expect(await sentinelReached(stream, marker)).toBe(true);
    stream.close();
    expect(acknowledged.length).toBe(afterKill);
    for (const write of acknowledged) {
      const read = await group.on(write.server === 0 ? 2 : 0)(`/memory/${write.id}`, { as: group.owner });
      expect(read.status, `${write.id} acknowledged by server ${write.server}`).toBe(200);
    }
    const streamedIds = new Set(stream.received.map((event) => event.payload.memory_id));
    for (const write of acknowledged) expect(streamedIds.has(write.id), write.id).toBe(true);
  });
});

describe.runIf(onPostgres)("archivists of three servers on one database", () => {
  let group: Group;
  const holderOf = (server: ServeProcess): string => `serve:${hostname()}:${server.pid}`;

  beforeAll(async () => {
    group = await startGroup(3, () => ({ ARCHIVIST: "on", ARCHIVIST_LLM_PROVIDER: "none", ARCHIVIST_LEASE_SECONDS: "10" }));
  }, 120_000);

  afterAll(async () => {
    await group?.stop();
  });

  it("work one at a time: one holds the lease, and another takes it over when its server stops", { timeout: 120_000 }, async () => {
    const status = async (index: number): Promise<string | null> =>
      (await group.on(index)<{ holder: string | null }>("/archivist/status", { as: group.owner })).body.holder;
    const holders = group.servers.map(holderOf);
    expect(await eventually(async () => holders.includes((await status(0)) ?? ""), 30_000)).toBe(true);
    const holder = (await status(1)) as string;
    // Two lease periods: every other archivist has asked by now, and been refused.
    await new Promise((resolve) => setTimeout(resolve, 21_000));
    for (const index of [0, 1, 2]) expect(await status(index)).toBe(holder);
    const started = await eventsAfter(group.on(2), group.owner, 0, "archivist.started");
    expect(started.map((event) => event.payload.holder)).toEqual([holder]);

    const leaving = holders.indexOf(holder);
    await (group.servers[leaving] as ServeProcess).stop();
    const remaining = [0, 1, 2].filter((index) => index !== leaving);
    const successor = async (): Promise<string | null> => status(remaining[0] as number);
    expect(await eventually(async () => ![null, holder].includes(await successor()), 40_000)).toBe(true);
    const next = (await successor()) as string;
    expect(remaining.map((index) => holders[index])).toContain(next);
    // The successor announces itself once it holds the lease, so its event may trail the lease a moment.
    const startedHolders = async (): Promise<unknown[]> =>
      (await eventsAfter(group.on(remaining[1] as number), group.owner, 0, "archivist.started")).map((event) => event.payload.holder);
    expect(await eventually(async () => (await startedHolders()).length >= 2, 30_000)).toBe(true);
    expect(await startedHolders()).toEqual([holder, next]);
  });
});
