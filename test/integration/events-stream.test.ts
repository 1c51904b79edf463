import { describe, expect } from "vitest";
import { withDatabase } from "../helpers/database.js";
import { test } from "../helpers/fixtures.js";
import type { Credentials, ErrorBody, TestServer } from "../helpers/server.js";
import { emitSentinel, openStream, parseFrames, receivedBefore, stalledStream, type OpenStream, type StreamedEvent } from "../helpers/stream.js";
import { eventually } from "../helpers/wait.js";

interface EventBody {
  seq: number;
  type: string;
  project: string | null;
  agent_id: string;
}

const seqs = (events: { seq: number }[]): number[] => events.map((event) => event.seq);

async function newestSeq(server: TestServer): Promise<number> {
  const marker = await server.request<EventBody>("/events", { as: server.owner, body: { type: "test.marker", payload: {} } });
  return marker.body.seq;
}

const it = test
  .extend("alice", ({ server }) => server.agent("alice"))
  .extend("bob", ({ server }) => server.agent("bob"))
  .extend("carol", ({ server }) => server.agent("carol"));

describe("the live event stream", () => {
  /** 100 changes of mixed kinds by alice and bob: memory, tasks, messages, custom events. */
  async function hundredChanges(server: TestServer, alice: Credentials, bob: Credentials): Promise<void> {
    for (let index = 0; index < 20; index++) {
      await server.request("/memory", { as: alice, body: { content: `stream note ${index} about the deploy pipeline ${index * 7}` } });
      const task = await server.request<{ id: string }>("/tasks", { as: bob, body: { title: `stream task ${index}` } });
      await server.request(`/tasks/${task.body.id}/claim`, { as: alice, method: "POST" });
      await server.request("/messages", { as: bob, body: { to: alice.agentId, body: `ping ${index}` } });
      await server.request("/events", { as: alice, body: { type: "test.marker", payload: { index } } });
    }
  }

  it("delivers 100 changes in seq order, then after a dropped connection exactly the ones missed", async ({ server, alice, bob }) => {
    const start = await newestSeq(server);
    const first = openStream(server, alice);
    await first.opened;
    await hundredChanges(server, alice, bob);
    expect(await eventually(() => first.received.length >= 100)).toBe(true);
    const all = first.received.slice(0, 100);
    expect(seqs(all)).toEqual([...seqs(all)].sort((a, b) => a - b));
    expect(all[0]?.seq).toBeGreaterThan(start);
    expect(all.every((event) => event.lastEventId === String(event.seq))).toBe(true);
    expect(new Set(all.map((event) => event.type))).toEqual(new Set(["memory.written", "task.created", "task.claimed", "message.received", "test.marker"]));
    first.close();

    // Resume after the 40th: the 60 not yet taken and 30 made while away, each once.
    const fortieth = all[39] as StreamedEvent;
    for (let index = 0; index < 30; index++) await server.request("/events", { as: bob, body: { type: "test.marker", payload: { away: index } } });
    const second = openStream(server, alice, { lastEventId: fortieth.seq });
    await second.opened;
    const resumed = await receivedBefore(second, await emitSentinel(server, bob));
    second.close();
    expect(resumed).toHaveLength(90);
    expect(seqs(resumed).slice(0, 60)).toEqual(seqs(all.slice(40)));
    expect(new Set(seqs(resumed)).size).toBe(90);
    expect(resumed.every((event) => event.seq > fortieth.seq)).toBe(true);
    expect(second.resets).toBe(0);
  });

  it("resumes from ?last_event_id= as from the header", async ({ server, alice, bob }) => {
    const before = await newestSeq(server);
    await server.request("/events", { as: bob, body: { type: "test.marker", payload: { n: 1 } } });
    await server.request("/events", { as: bob, body: { type: "test.marker", payload: { n: 2 } } });
    const stream = openStream(server, alice, { query: `?last_event_id=${before}` });
    expect(await eventually(() => stream.received.length >= 2)).toBe(true);
    stream.close();
    expect(stream.received.map((event) => event.payload)).toEqual([{ n: 1 }, { n: 2 }]);
  });

  it("filters by type (exact or a family) and by emitter", async ({ server, alice, bob }) => {
    const before = await newestSeq(server);
    const tasksOnly = openStream(server, alice, { query: `?type=task.*&last_event_id=${before}` });
    const bobsOnly = openStream(server, alice, { query: `?agent=${bob.agentId}&type=test.marker&last_event_id=${before}` });
    const task = await server.request<{ id: string }>("/tasks", { as: alice, body: { title: "filtered" } });
    await server.request(`/tasks/${task.body.id}/claim`, { as: alice, method: "POST" });
    await server.request("/events", { as: alice, body: { type: "test.marker", payload: { from: "alice" } } });
    await server.request("/events", { as: bob, body: { type: "test.marker", payload: { from: "bob" } } });
    // Each filtered stream's sentinel is one its filter lets through: a task event, a marker of bob's.
    const lastTask = await server.request<{ id: string }>("/tasks", { as: alice, body: { title: "the last task" } });
    const bobsLast = await server.request<EventBody>("/events", { as: bob, body: { type: "test.marker", payload: { last: true } } });
    const tasks = await receivedBefore(tasksOnly, (event) => event.payload.task_id === lastTask.body.id);
    const bobs = await receivedBefore(bobsOnly, (event) => event.seq === bobsLast.body.seq);
    tasksOnly.close();
    bobsOnly.close();
    expect(tasks.map((event) => event.type)).toEqual(["task.created", "task.claimed"]);
    expect(bobs.map((event) => event.payload)).toEqual([{ from: "bob" }]);
  });

  it("returns the same events to polling as to the stream, for the same caller", async ({ server, alice, bob }) => {
    const before = await newestSeq(server);
    const stream = openStream(server, bob, { lastEventId: before });
    await stream.opened;
    await hundredChanges(server, alice, bob);
    const polled: EventBody[] = [];
    let cursor = `seq:${before}`;
    for (;;) {
      const page = await server.request<EventBody[]>(`/events?since=${cursor}&limit=37`, { as: bob });
      polled.push(...page.body);
      if (page.body.length < 37) break;
      cursor = `seq:${page.body.at(-1)?.seq}`;
    }
    const streamed = await receivedBefore(stream, await emitSentinel(server, bob));
    stream.close();
    expect(polled.length).toBeGreaterThanOrEqual(100);
    expect(seqs(streamed)).toEqual(seqs(polled));
  });

  it("lists newest first with order=desc, paging down to since, with the same events as oldest first", async ({ server, alice, bob }) => {
    const before = await newestSeq(server);
    await hundredChanges(server, alice, bob);
    const ascending: EventBody[] = [];
    let cursor = `seq:${before}`;
    for (;;) {
      const page = await server.request<EventBody[]>(`/events?since=${cursor}&limit=500`, { as: bob });
      ascending.push(...page.body);
      if (page.body.length < 500) break;
      cursor = `seq:${page.body.at(-1)?.seq}`;
    }
    const descending: EventBody[] = [];
    let next: string | null = null;
    do {
      const page: { body: EventBody[]; headers: Headers } = await server.request<EventBody[]>(`/events?since=seq:${before}&order=desc&limit=37${next ? `&cursor=${next}` : ""}`, { as: bob });
      descending.push(...page.body);
      next = page.headers.get("x-next-cursor");
    } while (next);
    expect(ascending.length).toBeGreaterThanOrEqual(100);
    expect(seqs(descending)).toEqual(seqs(ascending).reverse());
    const newest = await server.request<EventBody[]>(`/events?since=seq:0&order=desc&limit=1&type=task.*`, { as: bob });
    expect(newest.body.map((event) => event.seq)).toEqual([Math.max(...ascending.filter((event) => event.type.startsWith("task.")).map((event) => event.seq))]);
  });

  it("counts an agent with an open stream as online", async ({ server }) => {
    const quiet = await server.agent("stream-quiet");
    // Last seen long ago (opening the stream counts as being seen, so this is set again after it).
    const longAgo = async (): Promise<void> => {
      await withDatabase(server.dataDir, (db) => db.run("UPDATE agents SET last_seen_at = '2000-01-01T00:00:00.000Z' WHERE agent_id = ?", quiet.agentId));
    };
    const online = async (): Promise<boolean | undefined> =>
      (await server.request<{ agent_id: string; online: boolean }[]>("/agents?limit=500", { as: server.owner })).body.find(
        (agent) => agent.agent_id === quiet.agentId,
      )?.online;
    await longAgo();
    expect(await online()).toBe(false);
    const stream = openStream(server, quiet);
    await stream.opened;
    await longAgo();
    expect(await online()).toBe(true);
    stream.close();
    expect(await eventually(async () => (await online()) === false, 5000)).toBe(true);
  });
});

describe("limits", () => {
  it("refuses a 17th open stream of one agent with 429, and allows it again once one closes", async ({ server }) => {
    const agent = await server.agent("many-streams");
    const streams = Array.from({ length: 16 }, () => openStream(server, agent));
    await Promise.all(streams.map((stream) => stream.opened));
    const refused = await server.request<ErrorBody>("/events/stream", { as: agent });
    expect(refused.status).toBe(429);
    expect(refused.body.detail).toBe("at most 16 open event streams per agent");
    expect(refused.headers.get("retry-after")).toBe("5");
    streams[0]?.close();
    // The server notices the closed connection a moment later; then there is room again.
    const opened: OpenStream[] = [];
    const reopened = await eventually(async () => {
      const attempt = openStream(server, agent);
      opened.push(attempt);
      return attempt.opened.then(
        () => true,
        () => false,
      );
    }, 5000);
    expect(reopened).toBe(true);
    for (const stream of [...streams, ...opened]) stream.close();
  });
});

describe("a stream whose agent is renamed", () => {
  it("ends, and the old credentials cannot reopen it", async ({ server }) => {
    const agent = await server.agent("stream-renamed");
    const stream = openStream(server, agent);
    await stream.opened;
    const renamed = await server.request("/agents/me", { as: agent, method: "PATCH", body: { agent_id: "stream-renamed-2" } });
    expect(renamed.status).toBe(200);
    // The server ends the stream; the client's reconnect with the old id is refused (401), so it gives up.
    expect(await eventually(() => stream.source.readyState === stream.source.CLOSED, 10_000)).toBe(true);
    stream.close();
  });
});

describe("who receives what", () => {
  it("never gives B A's private memory events, another project's task events, or messages between A and C", async ({ server, alice, bob, carol }) => {
    const stream = openStream(server, bob);
    await stream.opened;
    await server.request("/projects", { as: alice, body: { name: "hidden" } });
    const secret = await server.request<{ id: string }>("/memory", { as: alice, body: { content: "alice's private reminder", scope: "agent" } });
    await server.request(`/memory/${secret.body.id}`, { as: alice, method: "PATCH", body: { content: "alice's private reminder, edited" } });
    await server.request(`/memory/${secret.body.id}`, { as: alice, method: "DELETE" });
    const task = await server.request<{ id: string }>("/tasks", { as: alice, body: { title: "hidden work", project: "hidden" } });
    await server.request(`/tasks/${task.body.id}/claim`, { as: alice, method: "POST" });
    await server.request("/messages", { as: alice, body: { to: carol.agentId, body: "between us" } });
    await server.request("/messages/inbox/consume", { as: carol, method: "POST", body: {} });
    // What B may see, last, so everything before it has been decided.
    // Global: alice's current project is now "hidden", where an unnamed write would go.
    const open = await server.request<{ id: string }>("/memory", { as: alice, body: { content: "a note for the whole team", project: null } });
    await server.request("/events", { as: alice, body: { type: "test.marker", payload: { last: true } } });
    expect(await eventually(() => stream.received.some((event) => event.type === "test.marker"))).toBe(true);
    stream.close();

    expect(stream.received.map((event) => event.type)).toEqual(["memory.written", "test.marker"]);
    expect(stream.received[0]?.payload.memory_id).toBe(open.body.id);
    const text = JSON.stringify(stream.received);
    expect(text).not.toContain(secret.body.id);
    expect(text).not.toContain(task.body.id);
    expect(text).not.toContain("hidden");
  });

  it("delivers a project's events once B joins it", async ({ server, alice, bob }) => {
    await server.request("/projects", { as: alice, body: { name: "joinable" } });
    const stream = openStream(server, bob);
    await stream.opened;
    await server.request("/projects/joinable/join", { as: bob, method: "POST" });
    const task = await server.request<{ id: string }>("/tasks", { as: alice, body: { title: "now visible", project: "joinable" } });
    expect(await eventually(() => stream.received.some((event) => event.type === "task.created"))).toBe(true);
    stream.close();
    expect(stream.received.map((event) => event.type)).toEqual(["project.joined", "task.created"]);
    expect(stream.received[1]?.payload.task_id).toBe(task.body.id);
  });
});

describe("custom events, waiting and failed changes", () => {
  it("refuses the server's own families with 422, but lets the archivist emit archivist.*", async ({ server, alice }) => {
    for (const type of ["memory.written", "task.claimed", "message.received", "archivist.synthesis", "project.cleared", "agent.deleted", "session.handoff_saved"]) {
      const response = await server.request<ErrorBody>("/events", { as: alice, body: { type, payload: {} } });
      expect(response.status, type).toBe(422);
      expect(response.body.code).toBe("VALIDATION_FAILED");
    }
    const byArchivist = await server.request<EventBody>("/events", { as: server.archivist, body: { type: "archivist.synthesis", payload: { entries: 3 } } });
    expect(byArchivist.status).toBe(201);
    expect(byArchivist.body).toMatchObject({ type: "archivist.synthesis", agent_id: server.archivist.agentId, project: null });
    const custom = await server.request<EventBody>("/events", { as: alice, body: { type: "deploy.finished", payload: { build: 12 } } });
    expect(custom.status).toBe(201);
    expect((await server.request<ErrorBody>("/events", { as: alice, body: { type: "deploy.finished", project: "not-mine" } })).status).toBe(403);
    expect((await server.request<ErrorBody>("/events", { as: alice, body: { type: "deploy.finished", payload: { big: "x".repeat(20_000) } } })).status).toBe(413);
    expect((await server.request<ErrorBody>("/events", { as: alice, body: { type: "nodots" } })).status).toBe(422);
  });

  it("waits for the first matching event, or answers 204 at the timeout", async ({ server, alice }) => {
    // Without after_seq a wait is for events after the call: one sent before it is no answer.
    await server.request("/events", { as: alice, body: { type: "deploy.early", payload: {} } });
    const quiet = await server.request("/events/wait?types=never.happens,deploy.early&timeout=1", { as: alice });
    expect(quiet.status).toBe(204);
    // From a seq read before the events are sent, the wait finds them however late it begins.
    const mark = await newestSeq(server);
    const waiting = server.request<EventBody>(`/events/wait?types=deploy.*,test.marker&after_seq=${mark}&timeout=10`, { as: alice });
    await server.request("/events", { as: alice, body: { type: "other.thing", payload: {} } });
    await server.request("/events", { as: alice, body: { type: "deploy.started", payload: { n: 1 } } });
    const answered = await waiting;
    expect(answered.status).toBe(200);
    expect(answered.body).toMatchObject({ type: "deploy.started" });
    const earlier = await server.request<EventBody>(`/events/wait?types=deploy.started&after_seq=${answered.body.seq - 1}&timeout=1`, { as: alice });
    expect(earlier.body.seq).toBe(answered.body.seq);
  });

  it("records no event for a change that was refused or rolled back", async ({ server, alice }) => {
    const before = await newestSeq(server);
    expect((await server.request("/memory", { as: alice, body: { content: "" } })).status).toBe(422);
    expect((await server.request("/memory", { as: alice, body: { content: "a directive attempt", type: "directive" } })).status).toBe(403);
    const task = await server.request<{ id: string }>("/tasks", { as: server.owner, body: { title: "taken" } });
    await server.request(`/tasks/${task.body.id}/claim`, { as: server.owner, method: "POST" });
    expect((await server.request(`/tasks/${task.body.id}/claim`, { as: alice, method: "POST" })).status).toBe(409);
    expect((await server.request(`/tasks/${task.body.id}/complete`, { as: alice, method: "POST" })).status).toBe(403);
    expect((await server.request("/events", { as: alice, body: { type: "memory.written", payload: {} } })).status).toBe(422);
    const events = await server.request<EventBody[]>(`/events?since=seq:${before}`, { as: server.owner });
    expect(events.body.map((event) => event.type)).toEqual(["task.created", "task.claimed"]);
  });
});

describe("a slow consumer", () => {
  it.override("serverOptions", { streamQueueLimit: 50 });

  it("is disconnected when it falls behind, and on reconnect replays what it missed", async ({ server, alice }) => {
    const before = await newestSeq(server);
    const stalled = await stalledStream(server, alice);
    const filler = "x".repeat(15_000);
    const emitted: number[] = [];
    // Far more than the socket buffers hold, so the server's queue for this client overflows.
    for (let batch = 0; batch < 150; batch++) {
      const replies = await Promise.all(
        Array.from({ length: 10 }, (_, index) =>
          server.request<EventBody>("/events", { as: alice, body: { type: "test.bulk", payload: { n: batch * 10 + index, filler } } }),
        ),
      );
      emitted.push(...replies.map((reply) => reply.body.seq));
    }
    const frames = parseFrames(await stalled.readAll());
    const delivered = frames.filter((frame) => frame.event === "test.bulk").map((frame) => Number(frame.id));
    expect(delivered.length).toBeGreaterThan(0);
    expect(delivered.length).toBeLessThan(emitted.length);
    expect(delivered).toEqual([...delivered].sort((a, b) => a - b));
    expect(delivered[0]).toBeGreaterThan(before);

    const last = delivered.at(-1) as number;
    const resumed = openStream(server, alice, { lastEventId: last });
    const missing = [...emitted].sort((a, b) => a - b).filter((seq) => seq > last);
    expect(await eventually(() => resumed.received.filter((event) => event.type === "test.bulk").length >= missing.length, 20_000)).toBe(true);
    resumed.close();
    expect(seqs(resumed.received.filter((event) => event.type === "test.bulk"))).toEqual(missing);
  });
});

describe("retention and shutdown", () => {
  // A drain limit far beyond the test's own timeout: only streams that end at once let close() finish.
  it.override("serverOptions", { ssePingMs: 100, drainTimeoutMs: 10 * 60_000 });

  it("sends pings, and starts with a reset when the resume point was pruned", async ({ server }) => {
    const agent = await server.agent("retained");
    const old = await newestSeq(server);
    await server.request("/events", { as: agent, body: { type: "test.marker", payload: { kept: false } } });
    // Everything so far falls out of retention.
    await server.server.gateway.maintenance.pruneEvents(new Date(Date.now() + 60_000).toISOString());
    await server.request("/events", { as: agent, body: { type: "test.marker", payload: { kept: true } } });

    const stream = openStream(server, agent, { lastEventId: old });
    expect(await eventually(() => stream.received.length >= 1)).toBe(true);
    stream.close();
    expect(stream.resets).toBe(1);
    expect(stream.received.map((event) => event.payload)).toEqual([{ kept: true }]);
  });

  it("opens with retry, pings an idle stream every interval, and ends open streams promptly at shutdown", async ({ server }) => {
    const agent = await server.agent("pinged");
    const stalled = await stalledStream(server, agent);
    await new Promise((resolve) => setTimeout(resolve, 450));
    const ended = stalled.readAll();
    // A stream still open would hold close() to the drain limit, far past this test's timeout.
    await server.close();
    const frames = parseFrames(await ended);
    expect(frames[0]).toEqual({ retry: "3000" });
    expect(frames.filter((frame) => frame.comment === "ping").length).toBeGreaterThanOrEqual(3);
  });
});
