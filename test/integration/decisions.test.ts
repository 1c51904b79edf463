import { describe, expect } from "vitest";
import type { Decision } from "../../src/wire/decisions.js";
import type { EventRecord } from "../../src/wire/events.js";
import { test } from "../helpers/fixtures.js";
import { startTestServer, type Credentials, type ErrorBody, type TestServer } from "../helpers/server.js";
import { emitSentinel, openStream, receivedBefore } from "../helpers/stream.js";
import { eventually } from "../helpers/wait.js";

// CONTRACT §12: append-only records of what was decided and why.

const record = (server: TestServer, as: Credentials, body: Record<string, unknown>) => server.request<Decision & ErrorBody>("/decisions", { as, body });

async function recorded(server: TestServer, as: Credentials, body: Record<string, unknown>): Promise<Decision> {
  const response = await record(server, as, { rationale: "it was the simplest thing that works", ...body });
  expect(response.status, response.text).toBe(201);
  return response.body;
}

async function created<T = { id: string }>(server: TestServer, as: Credentials, path: string, body: Record<string, unknown>): Promise<T> {
  const response = await server.request<T>(path, { as, body });
  expect(response.status, `${path}: ${response.text}`).toBe(201);
  return response.body;
}

const list = async (server: TestServer, as: Credentials, query = ""): Promise<Decision[]> => {
  const response = await server.request<Decision[]>(`/decisions${query}`, { as });
  expect(response.status, response.text).toBe(200);
  return response.body;
};

const ids = (decisions: { id: string }[]): string[] => decisions.map((decision) => decision.id);

/** Decisions of chosen ids, written by the owner's import (the API chooses ids itself). */
async function imported(server: TestServer, decisions: Partial<Decision>[]): Promise<void> {
  const lines = decisions.map((decision) =>
    JSON.stringify({
      kind: "decision",
      project: null,
      agent_id: "alice",
      task_id: null,
      decision: "an imported decision",
      rationale: "carried over",
      alternatives: [],
      memory_refs: [],
      tags: [],
      supersedes: null,
      superseded_by: null,
      created_at: "2026-01-01T00:00:00.000Z",
      ...decision,
    }),
  );
  const response = await server.request<{ imported: { decisions: number }; errors: unknown[] }>("/admin/import", {
    as: server.owner,
    body: lines.join("\n"),
    headers: { "content-type": "application/x-ndjson" },
  });
  expect(response.body.errors).toEqual([]);
  expect(response.body.imported.decisions).toBe(decisions.length);
}

const it = test
  .extend("alice", ({ server }) => server.agent("alice"))
  .extend("bob", ({ server }) => server.agent("bob"))
  .extend("carol", ({ server }) => server.agent("carol"));

/** Alice's project `web` with carol in it; bob stays outside. Alice's current project is `web`. */
async function webProject(server: TestServer, alice: Credentials, carol: Credentials): Promise<void> {
  await created(server, alice, "/projects", { name: "web" });
  expect((await server.request("/projects/web/join", { as: carol, method: "POST" })).status).toBe(200);
}

describe("recording a decision", () => {
  it("stores the decision whole, with plain-string alternatives normalised, and reads it back by id, prefix and list", async ({ server, alice }) => {
    const response = await record(server, alice, {
      decision: "  Use SQLite for the first release  ",
      rationale: "One file, no server to run; PostgreSQL can come later.",
      alternatives: ["PostgreSQL", { option: "MongoDB", reason_rejected: "no transactions across documents we need" }, { option: "Redis" }],
      tags: ["storage", "storage", " release "],
      project: null,
    });
    expect(response.status, response.text).toBe(201);
    const decision = response.body;
    expect(decision).toEqual({
      id: expect.stringMatching(/^[0-9a-f-]{36}$/) as string,
      project: null,
      agent_id: "alice",
      task_id: null,
      decision: "Use SQLite for the first release",
      rationale: "One file, no server to run; PostgreSQL can come later.",
      alternatives: [
        { option: "PostgreSQL", reason_rejected: null },
        { option: "MongoDB", reason_rejected: "no transactions across documents we need" },
        { option: "Redis", reason_rejected: null },
      ],
      memory_refs: [],
      tags: ["storage", "release"],
      supersedes: null,
      superseded_by: null,
      created_at: expect.stringMatching(/^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/) as string,
    });
    for (const ref of [decision.id, decision.id.slice(0, 6), decision.id.slice(0, 13), decision.id.toUpperCase()]) {
      const read = await server.request<Decision>(`/decisions/${ref}`, { as: alice });
      expect(read.status, ref).toBe(200);
      expect(read.body).toEqual(decision);
    }
    expect(await list(server, alice)).toEqual([decision]);
  });

  it("goes to the caller's current project when project is omitted, and to global with null", async ({ server, alice, carol }) => {
    await webProject(server, alice, carol);
    expect((await recorded(server, alice, { decision: "Ship on Tuesdays" })).project).toBe("web");
    expect((await recorded(server, alice, { decision: "Ship on Tuesdays everywhere", project: null })).project).toBeNull();
  });

  it("accepts the limits exactly: 500 characters, 20 alternatives, 20 memory references, a rationale of MAX_CONTENT_BYTES bytes", async ({ server, alice }) => {
    const entries: string[] = [];
    for (let index = 0; index < 20; index++) entries.push((await created(server, alice, "/memory", { content: `Fact number ${index} about the cache`, project: null, allow_duplicate: true })).id);
    const decision = await recorded(server, alice, {
      decision: "d".repeat(500),
      rationale: "é".repeat(server.config.MAX_CONTENT_BYTES / 2),
      alternatives: Array.from({ length: 20 }, (_, index) => `option ${index}`),
      memory_refs: entries,
      project: null,
    });
    expect(decision.alternatives).toHaveLength(20);
    expect(decision.memory_refs).toEqual(entries);
  });

  it("refuses what breaks the schema with 422, naming each problem's path", async ({ server, alice }) => {
    const cases: [Record<string, unknown>, string][] = [
      [{ decision: "", rationale: "why" }, "decision"],
      [{ decision: "   ", rationale: "why" }, "decision"],
      [{ decision: "d".repeat(501), rationale: "why" }, "decision"],
      [{ decision: "no rationale" }, "rationale"],
      [{ decision: "blank rationale", rationale: "  \n " }, "rationale"],
      [{ decision: "too many alternatives", rationale: "why", alternatives: Array.from({ length: 21 }, (_, index) => `option ${index}`) }, "alternatives"],
      [{ decision: "an empty option", rationale: "why", alternatives: [{ option: "" }] }, "alternatives.0.option"],
      [{ decision: "an empty plain option", rationale: "why", alternatives: ["ok", "  "] }, "alternatives.1"],
      [{ decision: "an option with extra fields", rationale: "why", alternatives: [{ option: "x", chosen: false }] }, "alternatives.0.chosen"],
      [{ decision: "too many references", rationale: "why", memory_refs: Array.from({ length: 21 }, () => "0badc0de") }, "memory_refs"],
      [{ decision: "too many tags", rationale: "why", tags: Array.from({ length: 33 }, (_, index) => `tag${index}`) }, "tags"],
      [{ decision: "a tag too long", rationale: "why", tags: ["t".repeat(65)] }, "tags.0"],
      [{ decision: "a short task id", rationale: "why", task_id: "abc" }, "task_id"],
      [{ decision: "a task id that is no id", rationale: "why", task_id: "zzzzzzzz" }, "task_id"],
      [{ decision: "a reference that is no id", rationale: "why", memory_refs: ["not-hex-at-all"] }, "memory_refs.0"],
      [{ decision: "superseding no id", rationale: "why", supersedes: "qqqqqqqq" }, "supersedes"],
      [{ decision: "a field of its own", rationale: "why", status: "final" }, "status"],
      [{ decision: "a project that is no id", rationale: "why", project: "Not A Slug" }, "project"],
    ];
    for (const [body, path] of cases) {
      const response = await record(server, alice, { project: null, ...body });
      expect(response.status, JSON.stringify(body)).toBe(422);
      expect(response.body.code).toBe("VALIDATION_FAILED");
      expect(response.body.errors?.map((error) => error.path), JSON.stringify(body)).toContain(path);
    }
    expect(await list(server, alice, "?include_superseded=true")).toEqual([]);
  });

  it("refuses a rationale over MAX_CONTENT_BYTES bytes (not characters) with 413", async ({ server, alice }) => {
    const response = await record(server, alice, { decision: "too long", rationale: "é".repeat(server.config.MAX_CONTENT_BYTES / 2 + 1), project: null });
    expect(response.status).toBe(413);
    expect(response.body).toMatchObject({ code: "PAYLOAD_TOO_LARGE", detail: `rationale exceeds ${server.config.MAX_CONTENT_BYTES} bytes` });
  });

  it("needs membership to write into a project (403); the owner role is exempt", async ({ server, alice, bob, carol }) => {
    await webProject(server, alice, carol);
    const outsider = await record(server, bob, { decision: "Rewrite it in Rust", rationale: "fast", project: "web" });
    expect(outsider.status).toBe(403);
    expect(outsider.body.detail).toBe("not a member of this project");
    expect((await record(server, bob, { decision: "Somewhere that does not exist", rationale: "why", project: "nowhere" })).status).toBe(403);
    expect((await recorded(server, carol, { decision: "Keep the bundle under 200 KiB", project: "web" })).agent_id).toBe("carol");
    expect((await recorded(server, server.owner, { decision: "Freeze on Fridays", project: "web" })).project).toBe("web");
    expect((await list(server, bob)).map((decision) => decision.decision)).toEqual([]);
  });

  it("offers no way to change or delete a decision", async ({ server, alice }) => {
    const decision = await recorded(server, alice, { decision: "Tabs, not spaces", project: null });
    expect((await server.request(`/decisions/${decision.id}`, { as: alice, method: "PATCH", body: { decision: "Spaces" } })).status).toBe(404);
    expect((await server.request(`/decisions/${decision.id}`, { as: alice, method: "DELETE" })).status).toBe(404);
    expect((await server.request<Decision>(`/decisions/${decision.id}`, { as: alice })).body).toEqual(decision);
  });
});

describe("what a decision names", () => {
  it("keeps the full ids of its task, entries and superseded decision, given by prefix, each entry once", async ({ server, alice, carol }) => {
    await webProject(server, alice, carol);
    const task = await created(server, alice, "/tasks", { title: "Pick a bundler", project: "web" });
    const entry = await created(server, alice, "/memory", { content: "esbuild builds the app in 80 ms", project: "web" });
    const older = await recorded(server, alice, { decision: "Use webpack", project: "web" });
    const decision = await recorded(server, carol, {
      decision: "Use esbuild",
      project: "web",
      task_id: task.id.slice(0, 8),
      memory_refs: [entry.id.slice(0, 10), entry.id],
      supersedes: older.id.slice(0, 8),
    });
    expect(decision).toMatchObject({ task_id: task.id, memory_refs: [entry.id], supersedes: older.id });
  });

  it("answers 404 for a task, entry or decision that does not exist or that the caller cannot see: no existence oracle", async ({ server, alice, bob, carol }) => {
    await webProject(server, alice, carol);
    const hiddenTask = await created(server, alice, "/tasks", { title: "A task of web", project: "web" });
    const hiddenEntry = await created(server, alice, "/memory", { content: "A note of web", project: "web" });
    const privateEntry = await created(server, alice, "/memory", { content: "Alice's own note", scope: "agent", project: null });
    const hiddenDecision = await recorded(server, alice, { decision: "A decision of web", project: "web" });
    const nothing = "0badc0de-0000-4000-8000-000000000000";
    const cases: [Record<string, unknown>, string][] = [
      [{ task_id: hiddenTask.id }, "task not found"],
      [{ task_id: nothing }, "task not found"],
      [{ memory_refs: [hiddenEntry.id] }, "memory entry not found"],
      [{ memory_refs: [privateEntry.id] }, "memory entry not found"],
      [{ memory_refs: [nothing] }, "memory entry not found"],
      [{ supersedes: hiddenDecision.id }, "decision not found"],
      [{ supersedes: nothing }, "decision not found"],
    ];
    for (const [body, detail] of cases) {
      const response = await record(server, bob, { decision: "Bob's global decision", rationale: "why", project: null, ...body });
      expect(response.status, JSON.stringify(body)).toBe(404);
      expect(response.body.detail).toBe(detail);
    }
    expect((await server.request(`/decisions/${hiddenDecision.id}`, { as: bob })).status).toBe(404);
    expect((await server.request(`/decisions/${nothing}`, { as: bob })).status).toBe(404);
    // Nothing was written by the refusals.
    expect(await list(server, server.owner, "?include_superseded=true")).toEqual([hiddenDecision]);
  });

  it("answers 422 for a task, entry or decision of another project, and for a private entry", async ({ server, alice, carol }) => {
    await webProject(server, alice, carol);
    await created(server, alice, "/projects", { name: "api" });
    const apiTask = await created(server, alice, "/tasks", { title: "An api task", project: "api" });
    const globalTask = await created(server, alice, "/tasks", { title: "A global task", project: null });
    const apiEntry = await created(server, alice, "/memory", { content: "The api speaks JSON", project: "api" });
    const globalEntry = await created(server, alice, "/memory", { content: "The office opens at nine", project: null });
    const privateEntry = await created(server, alice, "/memory", { content: "My own web note", scope: "agent", project: "web" });
    const apiDecision = await recorded(server, alice, { decision: "The api is versioned by path", project: "api" });
    const cases: [Record<string, unknown>, string][] = [
      [{ task_id: apiTask.id }, "task_id"],
      [{ task_id: globalTask.id }, "task_id"],
      [{ memory_refs: [apiEntry.id] }, "memory_refs.0"],
      [{ memory_refs: [globalEntry.id] }, "memory_refs.0"],
      [{ memory_refs: [privateEntry.id] }, "memory_refs.0"],
      [{ supersedes: apiDecision.id }, "supersedes"],
    ];
    for (const [body, path] of cases) {
      const response = await record(server, alice, { decision: "A web decision", rationale: "why", project: "web", ...body });
      expect(response.status, JSON.stringify(body)).toBe(422);
      expect(response.body.errors?.map((error) => error.path)).toEqual([path]);
    }
    // A global decision may not name a project's task either.
    expect((await record(server, alice, { decision: "A global decision", rationale: "why", project: null, task_id: apiTask.id })).status).toBe(422);
  });

  it("adds a comment `decision <id>: <decision>` to its task, with a task.commented event, whatever the task's status", async ({ server, alice, bob, carol }) => {
    await webProject(server, alice, carol);
    const task = await created(server, alice, "/tasks", { title: "Choose the date library", project: "web" });
    expect((await server.request(`/tasks/${task.id}/claim`, { as: carol, body: {} })).status).toBe(200);
    expect((await server.request(`/tasks/${task.id}/complete`, { as: carol, body: {} })).status).toBe(200);
    const decision = await recorded(server, carol, { decision: "Use date-fns, not moment", project: "web", task_id: task.id });
    const log = await server.request<{ agent_id: string; kind: string; comment: string }[]>(`/tasks/${task.id}/comments`, { as: alice });
    expect(log.body.at(-1)).toMatchObject({ agent_id: "carol", kind: "comment", comment: `decision ${decision.id}: Use date-fns, not moment` });
    const events = await server.request<EventRecord[]>("/events?since=seq:0&type=task.commented", { as: alice });
    expect(events.body.map((event) => event.payload)).toEqual([expect.objectContaining({ task_id: task.id, kind: "comment", status: "completed" })]);
    // Bob may not see the task, nor learn of the comment.
    expect((await server.request<EventRecord[]>("/events?since=seq:0&type=task.commented", { as: bob })).body).toEqual([]);
    expect(await list(server, alice, `?task_id=${task.id}`)).toEqual([decision]);
  });
});

describe("superseding", () => {
  it("sets superseded_by on the older decision, hides it from the list unless include_superseded, and keeps the chain", async ({ server, alice }) => {
    const first = await recorded(server, alice, { decision: "Deploy with rsync", project: null });
    const second = await recorded(server, alice, { decision: "Deploy with containers", project: null, supersedes: first.id });
    const third = await recorded(server, alice, { decision: "Deploy with the platform's buildpacks", project: null, supersedes: second.id });
    expect(second.supersedes).toBe(first.id);
    expect((await server.request<Decision>(`/decisions/${first.id}`, { as: alice })).body).toEqual({ ...first, superseded_by: second.id });
    expect((await server.request<Decision>(`/decisions/${second.id}`, { as: alice })).body).toEqual({ ...second, superseded_by: third.id });
    expect(ids(await list(server, alice))).toEqual([third.id]);
    expect(ids(await list(server, alice, "?include_superseded=true"))).toEqual([third.id, second.id, first.id]);
  });

  it("refuses a second supersede of the same decision with 409 `decision already superseded`", async ({ server, alice, bob }) => {
    const first = await recorded(server, alice, { decision: "Log as text", project: null });
    const second = await recorded(server, alice, { decision: "Log as JSON", project: null, supersedes: first.id });
    const again = await record(server, bob, { decision: "Log as logfmt", rationale: "why", project: null, supersedes: first.id });
    expect(again.status).toBe(409);
    expect(again.body).toMatchObject({ code: "CONFLICT", detail: "decision already superseded" });
    expect((await server.request<Decision>(`/decisions/${first.id}`, { as: alice })).body.superseded_by).toBe(second.id);
    expect((await list(server, alice, "?include_superseded=true")).map((decision) => decision.decision)).toEqual(["Log as JSON", "Log as text"]);
  });

  it("lets exactly one of several concurrent supersedes of one decision win; the others get 409 and write nothing", async ({ server, alice, bob, carol }) => {
    const contested = await recorded(server, alice, { decision: "Cache in memory", project: null });
    const racers = [alice, bob, carol, alice, bob, carol];
    const answers = await Promise.all(
      racers.map((as, index) => record(server, as, { decision: `Cache in place ${index}`, rationale: "why", project: null, supersedes: contested.id })),
    );
    expect(answers.map((answer) => answer.status).sort()).toEqual([201, 409, 409, 409, 409, 409]);
    const winner = answers.find((answer) => answer.status === 201)?.body as Decision;
    expect((await server.request<Decision>(`/decisions/${contested.id}`, { as: alice })).body.superseded_by).toBe(winner.id);
    expect(ids(await list(server, alice, "?include_superseded=true")).sort()).toEqual([contested.id, winner.id].sort());
    const events = await server.request<EventRecord[]>("/events?since=seq:0&type=decision.recorded", { as: alice });
    expect(events.body).toHaveLength(2);
  });
});

describe("listing decisions", () => {
  it("finds by keywords in the decision or its rationale: every word must match, stemmed; text without a word finds nothing", async ({ server, alice }) => {
    const postgres = await recorded(server, alice, { decision: "Queue jobs in PostgreSQL", rationale: "Its row locking is enough for our load", project: null });
    const redis = await recorded(server, alice, { decision: "Cache sessions in Redis", rationale: "Expiry is built in", project: null });
    const query = async (q: string) => ids(await list(server, alice, `?q=${encodeURIComponent(q)}`));
    expect(await query("postgresql")).toEqual([postgres.id]);
    expect(await query("locks")).toEqual([postgres.id]);
    expect(await query("REDIS expiry")).toEqual([redis.id]);
    expect(await query("postgresql redis")).toEqual([]);
    expect(await query("jobs OR sessions")).toEqual([]);
    expect(await query('"cache" *')).toEqual([redis.id]);
    expect(await query("!!! ???")).toEqual([]);
  });

  it("filters by project (empty: global), task, author and tag, newest first", async ({ server, alice, bob, carol }) => {
    await webProject(server, alice, carol);
    const task = await created(server, alice, "/tasks", { title: "Pick fonts", project: "web" });
    const globalOne = await recorded(server, bob, { decision: "Use UTC everywhere", project: null, tags: ["time"] });
    const webOne = await recorded(server, alice, { decision: "Self-host the fonts", project: "web", task_id: task.id, tags: ["fonts", "privacy"] });
    const webTwo = await recorded(server, carol, { decision: "Two font weights only", project: "web", task_id: task.id, tags: ["fonts"] });
    expect(ids(await list(server, alice))).toEqual([webTwo.id, webOne.id, globalOne.id]);
    expect(ids(await list(server, alice, "?project=web"))).toEqual([webTwo.id, webOne.id]);
    expect(ids(await list(server, alice, "?project="))).toEqual([globalOne.id]);
    expect(ids(await list(server, alice, `?task_id=${task.id}`))).toEqual([webTwo.id, webOne.id]);
    expect(ids(await list(server, alice, `?task_id=${task.id.slice(0, 8)}`))).toEqual([webTwo.id, webOne.id]);
    expect(ids(await list(server, alice, "?agent=carol"))).toEqual([webTwo.id]);
    expect(ids(await list(server, alice, "?tag=fonts"))).toEqual([webTwo.id, webOne.id]);
    expect(ids(await list(server, alice, "?tag=privacy&agent=alice"))).toEqual([webOne.id]);
    // Bob is not in web: only the global decision, whatever he asks for.
    expect(ids(await list(server, bob))).toEqual([globalOne.id]);
    expect(ids(await list(server, bob, "?tag=fonts"))).toEqual([]);
    expect((await server.request<ErrorBody>("/decisions?limit=0", { as: alice })).status).toBe(422);
    expect((await server.request<ErrorBody>("/decisions?task_id=xyz", { as: alice })).status).toBe(422);
  });

  it("pages newest first with a cursor: Link and X-Next-Cursor, no duplicates, no gaps", async ({ server, alice }) => {
    const made: string[] = [];
    for (let index = 0; index < 7; index++) made.push((await recorded(server, alice, { decision: `Decision ${index}`, project: null })).id);
    const seen: string[] = [];
    let path = "/decisions?limit=3";
    for (let page = 0; page < 5 && path !== ""; page++) {
      const response = await server.request<Decision[]>(path, { as: alice });
      expect(response.status).toBe(200);
      seen.push(...ids(response.body));
      const cursor = response.headers.get("x-next-cursor");
      if (cursor) expect(response.headers.get("link")).toContain('rel="next"');
      path = cursor ? `/decisions?limit=3&cursor=${encodeURIComponent(cursor)}` : "";
    }
    expect(seen).toEqual([...made].reverse());
  });

  it("tells prefixes apart only among visible decisions: two visible matches are 400 `ambiguous id prefix`", async ({ server, alice }) => {
    await created(server, server.owner, "/projects", { name: "secret" });
    await imported(server, [
      { id: "abcdef01-0000-4000-8000-000000000001", decision: "a global one" },
      { id: "abcdef01-0000-4000-8000-000000000002", decision: "a secret one", project: "secret" },
    ]);
    const mine = await server.request<Decision>("/decisions/abcdef01", { as: alice });
    expect(mine.status).toBe(200);
    expect(mine.body.decision).toBe("a global one");
    const ambiguous = await server.request<ErrorBody>("/decisions/abcdef01", { as: server.owner });
    expect(ambiguous.status).toBe(400);
    expect(ambiguous.body).toMatchObject({ code: "BAD_REQUEST", detail: "ambiguous id prefix" });
    expect((await record(server, server.owner, { decision: "d", rationale: "r", project: null, supersedes: "abcdef01" })).status).toBe(400);
    expect((await server.request<ErrorBody>("/decisions/abcde", { as: alice })).status).toBe(422);
  });
});

describe("decision.recorded", () => {
  it("is emitted with {decision_id, project, task_id, supersedes} and delivered to the project's members only", async ({ server, alice, bob, carol }) => {
    await webProject(server, alice, carol);
    const task = await created(server, alice, "/tasks", { title: "Choose a licence", project: "web" });
    const carolStream = openStream(server, carol, { query: "?type=decision.*" });
    const bobStream = openStream(server, bob);
    await Promise.all([carolStream.opened, bobStream.opened]);
    try {
      const first = await recorded(server, alice, { decision: "MIT licence", project: "web", task_id: task.id });
      const second = await recorded(server, alice, { decision: "Apache-2.0 licence", project: "web", supersedes: first.id });
      const global = await recorded(server, alice, { decision: "Every repo has a licence file", project: null });
      const sentinel = await emitSentinel(server, alice);
      await receivedBefore(bobStream, sentinel);
      expect(bobStream.received.filter((event) => event.type === "decision.recorded").map((event) => event.payload)).toEqual([
        { decision_id: global.id, project: null, task_id: null, supersedes: null },
      ]);
      expect(await eventually(() => carolStream.received.length >= 3)).toBe(true);
      const carolSaw = carolStream.received.filter((event) => event.type === "decision.recorded");
      expect(carolSaw.map((event) => [event.agent_id, event.project, event.payload])).toEqual([
        ["alice", "web", { decision_id: first.id, project: "web", task_id: task.id, supersedes: null }],
        ["alice", "web", { decision_id: second.id, project: "web", task_id: null, supersedes: first.id }],
        ["alice", null, { decision_id: global.id, project: null, task_id: null, supersedes: null }],
      ]);
    } finally {
      carolStream.close();
      bobStream.close();
    }
    expect((await server.request<EventRecord[]>("/events?since=seq:0&type=decision.recorded", { as: bob })).body).toHaveLength(1);
  });

  it("cannot be forged with a custom event (422)", async ({ server, alice }) => {
    const forged = await server.request<ErrorBody>("/events", { as: alice, body: { type: "decision.recorded", payload: {} } });
    expect(forged.status).toBe(422);
  });
});

describe("clearing a project", () => {
  it("keeps its decisions unless asked, and removes only them (with their tags and keywords) when asked", async ({ server, alice, carol }) => {
    await webProject(server, alice, carol);
    await recorded(server, alice, { decision: "Prefer composition", project: "web", tags: ["style"] });
    const older = await recorded(server, alice, { decision: "Use semicolons", project: "web" });
    await recorded(server, carol, { decision: "No semicolons", project: "web", supersedes: older.id });
    const global = await recorded(server, alice, { decision: "Style is the formatter's", project: null, tags: ["style"] });
    const kept = await server.request("/projects/web/clear", { as: alice, body: { memory: true, tasks: true, messages: true } });
    expect(kept.body).toEqual({ memory: 0, tasks: 0, messages: 0, decisions: 0 });
    expect(await list(server, alice, "?project=web&include_superseded=true")).toHaveLength(3);

    expect((await server.request("/projects/web/clear", { as: carol, body: { decisions: true } })).status).toBe(403);
    const cleared = await server.request("/projects/web/clear", { as: alice, body: { decisions: true } });
    expect(cleared.body).toEqual({ memory: 0, tasks: 0, messages: 0, decisions: 3 });
    expect(ids(await list(server, alice, "?include_superseded=true"))).toEqual([global.id]);
    expect(ids(await list(server, alice, "?tag=style"))).toEqual([global.id]);
    expect(ids(await list(server, alice, "?q=semicolons&include_superseded=true"))).toEqual([]);
    expect((await server.request(`/decisions/${older.id}`, { as: alice })).status).toBe(404);
    const events = await server.request<EventRecord[]>("/events?since=seq:0&type=project.cleared", { as: alice });
    expect(events.body.at(-1)?.payload).toEqual({ project: "web", memory: 0, tasks: 0, messages: 0, decisions: 3 });
  });
});

describe("renaming an agent", () => {
  it("carries its decisions to the new id", async ({ server, alice }) => {
    const decision = await recorded(server, alice, { decision: "Name things plainly", project: null });
    expect((await server.request("/agents/me", { as: alice, method: "PATCH", body: { agent_id: "alicia" } })).status).toBe(200);
    const renamed = { agentId: "alicia", apiKey: alice.apiKey };
    expect((await server.request<Decision>(`/decisions/${decision.id}`, { as: renamed })).body.agent_id).toBe("alicia");
    expect(ids(await list(server, renamed, "?agent=alicia"))).toEqual([decision.id]);
  });
});

describe("export and import", () => {
  it("carries decisions with their ids, authors, times and supersede links, and the task comment with its task", async ({ server, alice, carol }) => {
    await webProject(server, alice, carol);
    const task = await created(server, alice, "/tasks", { title: "Pick the test runner", project: "web" });
    const entry = await created(server, alice, "/memory", { content: "vitest runs the suite in 12 s", project: "web" });
    const first = await recorded(server, alice, { decision: "Use jest", project: "web", task_id: task.id, alternatives: ["mocha"], tags: ["tests"] });
    const second = await recorded(server, carol, {
      decision: "Use vitest",
      project: "web",
      supersedes: first.id,
      memory_refs: [entry.id],
      alternatives: [{ option: "jest", reason_rejected: "slow with ESM" }],
    });
    const global = await recorded(server, alice, { decision: "Tests run on every push", project: null });
    const exported = await server.request("/admin/export", { as: server.owner });
    const lines = exported.text
      .split("\n")
      .filter((line) => line !== "")
      .map((line) => JSON.parse(line) as { kind: string; id?: string });
    // After the edges, before the tasks; a superseded decision before the one that superseded it.
    expect(lines.map((line) => line.kind).filter((kind) => kind !== "agent")).toEqual(["header", "project", "entry", "decision", "decision", "decision", "task"]);
    expect(lines.filter((line) => line.kind === "decision")).toEqual([
      { kind: "decision", ...first, superseded_by: second.id },
      { kind: "decision", ...second },
      { kind: "decision", ...global },
    ]);

    const target = await startTestServer();
    try {
      const answer = await target.request<{ imported: Record<string, number>; errors: unknown[] }>("/admin/import", {
        as: target.owner,
        body: exported.text,
        headers: { "content-type": "application/x-ndjson" },
      });
      expect(answer.body).toMatchObject({ imported: { projects: 1, entries: 1, edges: 0, decisions: 3, tasks: 1 }, errors: [] });
      for (const decision of [first, second, global]) {
        const before = await server.request<Decision>(`/decisions/${decision.id}`, { as: server.owner });
        expect((await target.request<Decision>(`/decisions/${decision.id}`, { as: target.owner })).body).toEqual(before.body);
      }
      expect(ids(await list(target, target.owner))).toEqual([global.id, second.id]);
      expect(ids(await list(target, target.owner, "?q=vitest"))).toEqual([second.id]);
      const log = await target.request<{ comment: string }[]>(`/tasks/${task.id}/comments`, { as: target.owner });
      expect(log.body.map((comment) => comment.comment)).toEqual([`decision ${first.id}: Use jest`]);
      const events = await target.request<EventRecord[]>("/events?since=seq:0&type=decision.recorded", { as: target.owner });
      expect(events.body.map((event) => event.payload)).toContainEqual({ decision_id: second.id, project: "web", task_id: null, supersedes: first.id, reason: "imported" });

      const again = await target.request<{ imported: Record<string, number>; skipped: number }>("/admin/import", {
        as: target.owner,
        body: exported.text,
        headers: { "content-type": "application/x-ndjson" },
      });
      expect(again.body.imported.decisions).toBe(0);
      // The project, the entry, the three decisions, the task and the four agents.
      expect(again.body.skipped).toBe(lines.length - 1);
      expect(lines.filter((line) => line.kind === "agent")).toHaveLength(4);
    } finally {
      await target.close();
    }
  });

  it("marks a decision here superseded by an imported one, and refuses a line superseding one already superseded here", async ({ server, alice }) => {
    const here = await recorded(server, alice, { decision: "Indent with two spaces", project: null });
    await imported(server, [{ id: "5eed5eed-0000-4000-8000-000000000001", decision: "Indent with four spaces", supersedes: here.id }]);
    expect((await server.request<Decision>(`/decisions/${here.id}`, { as: alice })).body.superseded_by).toBe("5eed5eed-0000-4000-8000-000000000001");
    const refused = await server.request<{ errors: { line: number; detail: string }[] }>("/admin/import", {
      as: server.owner,
      body: JSON.stringify({
        kind: "decision",
        id: "5eed5eed-0000-4000-8000-000000000002",
        project: null,
        agent_id: "bob",
        task_id: null,
        decision: "Indent with tabs",
        rationale: "why",
        alternatives: [],
        memory_refs: [],
        tags: [],
        supersedes: here.id,
        superseded_by: null,
        created_at: "2026-01-02T00:00:00.000Z",
      }),
      headers: { "content-type": "application/x-ndjson" },
    });
    expect(refused.body.errors).toEqual([{ line: 1, detail: `decision ${here.id} is already superseded` }]);
  });

  it("refuses a line naming an id the decision record could not carry", async ({ server }) => {
    const line = { kind: "decision", id: "5eed5eed-0000-4000-8000-000000000003", project: null, agent_id: "bob", task_id: null, decision: "d", rationale: "r" };
    const body = { ...line, alternatives: [], memory_refs: ["12345678-1234-1234-1234-123456789abc"], tags: [], supersedes: null, superseded_by: null, created_at: "2026-01-02T00:00:00.000Z" };
    const refused = await server.request<{ errors: { line: number; detail: string }[] }>("/admin/import", {
      as: server.owner,
      body: JSON.stringify(body),
      headers: { "content-type": "application/x-ndjson" },
    });
    expect(refused.body.errors).toEqual([{ line: 1, detail: "invalid line: memory_refs.0: expected an RFC 9562 uuid" }]);
  });
});
