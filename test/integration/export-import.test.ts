import { afterEach, describe, expect, it } from "vitest";
import { startTestServer, type Credentials, type TestServer } from "../helpers/server.js";

// CONTRACT §10a: the owner exports everything shared as JSON Lines and imports such a file (or
// the MCP reference memory server's memory.json) into another server, ids and history intact.

interface Line {
  kind?: string;
  type?: string;
  id?: string;
  [field: string]: unknown;
}

interface ImportAnswer {
  imported: Record<"projects" | "agents" | "entries" | "edges" | "decisions" | "blueprints" | "tasks" | "runs" | "messages" | "handoffs", number>;
  skipped: number;
  errors: { line: number; detail: string }[];
  dry_run: boolean;
}

const servers: TestServer[] = [];
afterEach(async () => {
  for (const server of servers.splice(0)) await server.close();
});

async function server(env: Record<string, string> = {}): Promise<TestServer> {
  const started = await startTestServer(env);
  servers.push(started);
  return started;
}

async function rest<T = { id: string }>(target: TestServer, as: Credentials, path: string, options: { method?: string; body?: unknown } = {}): Promise<T> {
  const response = await target.request<T>(path, { ...options, as });
  if (response.status >= 300) throw new Error(`${options.method ?? "GET"} ${path}: ${response.status} ${response.text}`);
  return response.body;
}

async function exportText(target: TestServer, query = ""): Promise<string> {
  const response = await target.request(`/admin/export${query}`, { as: target.owner });
  expect(response.status, response.text).toBe(200);
  expect(response.headers.get("content-type")).toMatch(/^application\/x-ndjson/);
  return response.text;
}

/** An import's counts: zero for every kind not named. */
const counts = (named: Partial<ImportAnswer["imported"]>): ImportAnswer["imported"] => ({
  projects: 0,
  agents: 0,
  entries: 0,
  edges: 0,
  decisions: 0,
  blueprints: 0,
  tasks: 0,
  runs: 0,
  messages: 0,
  handoffs: 0,
  ...named,
});

const parse = (text: string): Line[] =>
  text
    .split("\n")
    .filter((line) => line !== "")
    .map((line) => JSON.parse(line) as Line);

async function importText(target: TestServer, text: string, query = "", as: Credentials = target.owner) {
  return target.request<ImportAnswer>(`/admin/import${query}`, { as, body: text, headers: { "content-type": "application/x-ndjson" } });
}

/** A server with a project, shared and private entries, an edited entry, an edge and tasks with history. */
async function populated() {
  const source = await server();
  const alice = await source.agent("alice");
  await rest(source, alice, "/projects", { body: { name: "Web" } });
  const deploys = await rest(source, alice, "/memory", { body: { content: "Deploys go out on Tuesdays after the freeze", tags: ["deploy"], project: "web" } });
  const rollback = await rest(source, alice, "/memory", { body: { content: "Rollbacks use the blue-green switch in the load balancer", project: "web" } });
  const global = await rest(source, alice, "/memory", { body: { content: "The office wifi password rotates monthly", project: null } });
  const secret = await rest(source, alice, "/memory", { body: { content: "My private scratch note about zebras", scope: "agent", project: null } });
  await rest(source, alice, `/memory/${deploys.id}`, { method: "PATCH", body: { content: "Deploys go out on Tuesdays and Thursdays after the freeze" } });
  const edge = await rest(source, alice, "/graph/edge", { body: { src: rollback.id, dst: deploys.id, rel: "supports", note: "same release train" } });
  const announce = await rest(source, alice, "/tasks", { body: { title: "Announce the release", project: "web" } });
  const first = await rest(source, alice, "/tasks", { body: { title: "Write the release notes", project: "web", tags: ["docs"] } });
  const second = await rest(source, alice, "/tasks", { body: { title: "Publish the release", project: "web", depends_on: [first.id] } });
  // The oldest task comes to depend on the newest: an export in creation order could not be imported.
  await rest(source, alice, `/tasks/${announce.id}/dependencies`, { body: { depends_on: second.id } });
  await rest(source, alice, `/tasks/${first.id}/claim`, { method: "POST", body: { comment: "on it" } });
  await rest(source, alice, `/tasks/${first.id}/complete`, { method: "POST", body: { comment: "done", output: { pages: 3 } } });
  await rest(source, alice, `/tasks/${second.id}/comments`, { body: { comment: "waiting for the notes" } });
  return { source, alice, ids: { deploys: deploys.id, rollback: rollback.id, global: global.id, secret: secret.id, edge: edge.id, first: first.id, second: second.id, announce: announce.id } };
}

describe("GET /admin/export", () => {
  it("streams a header, the projects with their members, the agents, every shared entry with its source, the edges and the tasks as JSON Lines", async () => {
    const { source, ids } = await populated();
    const lines = parse(await exportText(source));
    expect(lines[0]).toMatchObject({ kind: "header", format: 2, url: source.config.PUBLIC_URL });
    expect(lines.map((line) => line.kind)).toEqual(["header", "project", "agent", "agent", "agent", "entry", "entry", "entry", "edge", "task", "task", "task"]);
    expect(lines[1]).toMatchObject({ id: "web", members: [{ agent_id: "alice" }] });
    // The owner, the archivist and alice, by id; never a key, nor anything about one.
    const agents = lines.filter((line) => line.kind === "agent");
    expect(agents.map((agent) => agent.agent_id).sort()).toEqual(["alice", source.config.ARCHIVIST_AGENT_ID, source.config.UI_AGENT_ID].sort());
    expect(Object.keys(agents[0] as Line).sort()).toEqual(["agent_id", "created_at", "current_project", "deleted_at", "display_name", "kind", "last_seen_at", "role"]);
    const deploys = lines.find((line) => line.id === ids.deploys) as Line;
    expect(deploys).toMatchObject({ kind: "entry", agent_id: "alice", project: "web", version: 2, tags: ["deploy"], source: null });
    expect(deploys).not.toHaveProperty("embedding");
    expect(lines.find((line) => line.id === ids.edge)).toMatchObject({ kind: "edge", src: ids.rollback, dst: ids.deploys, rel: "supports" });
    const tasks = lines.filter((line) => line.kind === "task");
    // Dependencies come before the tasks that need them, whatever their age.
    expect(tasks.map((task) => task.id)).toEqual([ids.first, ids.second, ids.announce]);
    expect(tasks[0]).toMatchObject({ status: "completed", result: { pages: 3 }, outcomes: [{ agent_id: "alice", outcome: "completed" }] });
    expect((tasks[0]?.comments as { kind: string }[]).map((comment) => comment.kind)).toEqual(["claim", "complete"]);
    expect(tasks[1]).toMatchObject({ depends_on: [ids.first] });
  });

  it("never exports a private entry, not even to the owner", async () => {
    const { source, ids } = await populated();
    const text = await exportText(source);
    expect(text).not.toContain(ids.secret);
    expect(text).not.toContain("zebras");
  });

  it("keeps one project's records with project, global ones with an empty project, and recent changes with since", async () => {
    const { source, alice, ids } = await populated();
    const web = parse(await exportText(source, "?project=web"));
    expect(web.filter((line) => line.kind === "entry").map((line) => line.id).sort()).toEqual([ids.deploys, ids.rollback].sort());
    expect(web.filter((line) => line.kind === "project").map((line) => line.id)).toEqual(["web"]);
    const global = parse(await exportText(source, "?project="));
    expect(global.filter((line) => line.kind === "entry").map((line) => line.id)).toEqual([ids.global]);
    // Agents belong to no project: they come with the global records, not with one project's.
    expect(global.filter((line) => !["entry", "agent", "header"].includes(line.kind ?? ""))).toEqual([]);
    expect(global.filter((line) => line.kind === "agent")).toHaveLength(3);
    expect(web.filter((line) => line.kind === "agent")).toEqual([]);

    const mark = new Date().toISOString();
    await new Promise((resolve) => setTimeout(resolve, 5));
    const later = await rest(source, alice, "/memory", { body: { content: "Staging resets every night at two", project: "web" } });
    const recent = parse(await exportText(source, `?since=${encodeURIComponent(mark)}`));
    expect(recent.filter((line) => line.kind === "entry").map((line) => line.id)).toEqual([later.id]);
    expect(recent.filter((line) => line.kind === "task" || line.kind === "edge")).toEqual([]);
  });

  it("answers 404 for a project that does not exist", async () => {
    const target = await server();
    expect((await target.request("/admin/export?project=nowhere", { as: target.owner })).status).toBe(404);
  });
});

describe("POST /admin/import", () => {
  it("re-creates an export on a fresh server with the same ids, authors, versions and times, searchable", async () => {
    const { source, ids } = await populated();
    // Whatever model embedded an entry there, the importing server embeds it with its own.
    const text = (await exportText(source)).replaceAll('"embedding_model":"hash-512"', '"embedding_model":"a-model-from-elsewhere"');
    expect(text).toContain("a-model-from-elsewhere");
    const target = await server();
    const response = await importText(target, text);
    expect(response.status, response.text).toBe(200);
    // The owner and the archivist are there already: only alice is new.
    expect(response.body).toEqual({ imported: counts({ projects: 1, agents: 1, entries: 3, edges: 1, tasks: 3 }), skipped: 2, errors: [], dry_run: false });

    for (const id of [ids.deploys, ids.rollback, ids.global]) {
      const before = await rest<Record<string, unknown>>(source, source.owner, `/memory/${id}`);
      const after = await rest<Record<string, unknown>>(target, target.owner, `/memory/${id}`);
      for (const field of ["id", "type", "agent_id", "project", "scope", "content", "tags", "confidence", "version", "created_at", "updated_at"]) {
        expect(after[field], `${id} ${field}`).toEqual(before[field]);
      }
      expect(after.embedding_model).toBe(before.embedding_model);
    }
    const hits = await rest<{ id: string }[]>(target, target.owner, "/memory/search?q=blue-green%20switch%20rollbacks");
    expect(hits.map((hit) => hit.id)).toContain(ids.rollback);
    const node = await rest<{ edges: { out: { id: string; rel: string; note: string }[] } }>(target, target.owner, `/graph/${ids.rollback}`);
    expect(node.edges.out).toEqual([expect.objectContaining({ id: ids.edge, rel: "supports", note: "same release train" })]);

    for (const id of [ids.first, ids.second, ids.announce]) {
      expect(await rest(target, target.owner, `/tasks/${id}`)).toEqual(await rest(source, source.owner, `/tasks/${id}`));
    }
    const comments = await rest<{ id: string; kind: string }[]>(target, target.owner, `/tasks/${ids.first}/comments`);
    expect(comments).toEqual(await rest(source, source.owner, `/tasks/${ids.first}/comments`));
    expect((await rest<{ id: string }[]>(target, target.owner, "/projects")).map((project) => project.id)).toEqual(["web"]);
    // What the tasks taught about alice comes along: her completed task counts.
    const performance = await rest<{ agent_id: string; completed: number }[]>(target, target.owner, "/agents/performance");
    expect(performance).toEqual([expect.objectContaining({ agent_id: "alice", completed: 1 })]);
  });

  it("announces each imported record with its event", async () => {
    const { source, ids } = await populated();
    const target = await server();
    const since = new Date(Date.now() - 1000).toISOString();
    await importText(target, await exportText(source));
    const events = await rest<{ type: string; payload: Record<string, unknown> }[]>(target, target.owner, `/events?since=${encodeURIComponent(since)}&limit=100`);
    const written = events.filter((event) => event.type === "memory.written").map((event) => event.payload.memory_id);
    expect(written.sort()).toEqual([ids.deploys, ids.rollback, ids.global].sort());
    expect(events.filter((event) => event.type === "task.created")).toHaveLength(3);
    expect(events.filter((event) => event.type === "graph.linked")).toHaveLength(1);
    expect(events.find((event) => event.type === "memory.written")?.payload).toMatchObject({ reason: "imported" });
  });

  it("skips records whose id exists, and reports the lines it cannot import by number while importing the rest", async () => {
    const { source, ids } = await populated();
    const text = await exportText(source);
    const again = await importText(source, text);
    expect(again.body).toEqual({ imported: counts({}), skipped: 11, errors: [], dry_run: false });

    const target = await server();
    const fresh = "11111111-2222-4333-8444-555555555555";
    const entry = parse(text).find((line) => line.id === ids.global) as Line;
    const body = [
      "not json at all",
      JSON.stringify({ ...entry, id: fresh, content: "A note that arrives intact" }),
      "",
      JSON.stringify({ ...entry, id: "aaaaaaaa-bbbb-4ccc-8ddd-eeeeeeeeeeee", version: "two" }),
      JSON.stringify({ kind: "edge", id: "99999999-8888-4777-8666-555555555555", src: fresh, dst: ids.deploys, rel: "supports", note: null, project: null, agent_id: "alice", created_at: entry.created_at, updated_at: entry.updated_at }),
      JSON.stringify({ kind: "decision", id: "12121212-3434-4565-8787-909090909090" }),
      JSON.stringify({ ...entry, id: "bbbbbbbb-cccc-4ddd-8eee-ffffffffffff", scope: "agent" }),
    ].join("\n");
    const response = await importText(target, body);
    expect(response.status).toBe(200);
    expect(response.body.imported.entries).toBe(1);
    expect(response.body.errors.map((error) => error.line)).toEqual([1, 4, 5, 6, 7]);
    expect(response.body.errors[0]?.detail).toBe("not valid json");
    expect(response.body.errors[1]?.detail).toContain("version");
    expect(response.body.errors[2]?.detail).toBe(`entry ${ids.deploys} not found`);
    // A decision line is read like any other: this one lacks its fields.
    expect(response.body.errors[3]?.detail).toMatch(/^invalid line: /);
    expect(response.body.errors[4]?.detail).toContain("private");
    expect((await rest<{ content: string }>(target, target.owner, `/memory/${fresh}`)).content).toBe("A note that arrives intact");
    expect((await target.request("/memory/aaaaaaaa-bbbb-4ccc-8ddd-eeeeeeeeeeee", { as: target.owner })).status).toBe(404);
  });

  it("writes nothing on a dry run, yet reports what it would import", async () => {
    const { source } = await populated();
    const text = await exportText(source);
    const target = await server();
    const since = new Date(Date.now() - 1000).toISOString();
    const response = await importText(target, text, "?dry_run=true");
    expect(response.body).toEqual({ imported: counts({ projects: 1, agents: 1, entries: 3, edges: 1, tasks: 3 }), skipped: 2, errors: [], dry_run: true });
    expect(await rest(target, target.owner, "/memory")).toEqual([]);
    expect(await rest(target, target.owner, "/tasks")).toEqual([]);
    expect(await rest(target, target.owner, "/projects")).toEqual([]);
    const events = await rest<{ type: string }[]>(target, target.owner, `/events?since=${encodeURIComponent(since)}`);
    expect(events.filter((event) => !event.type.startsWith("agent."))).toEqual([]);
  });

  it("turns the MCP reference memory server's memory.json into entries and relates_to edges", async () => {
    const target = await server();
    await rest(target, target.owner, "/projects", { body: { name: "People" } });
    const memoryJson = [
      { type: "entity", name: "John_Smith", entityType: "person", observations: ["Speaks fluent Spanish", "Graduated in 2019"] },
      { type: "entity", name: "Anthropic", entityType: "organization", observations: ["Builds Claude"] },
      { type: "relation", from: "John_Smith", to: "Anthropic", relationType: "works_at" },
      { type: "relation", from: "John_Smith", to: "Anthropic", relationType: "admires" },
      { type: "relation", from: "John_Smith", to: "Nobody", relationType: "knows" },
    ]
      .map((line) => JSON.stringify(line))
      .join("\n");
    const response = await importText(target, memoryJson, "?project=people");
    expect(response.body).toMatchObject({ imported: { entries: 2, edges: 2 }, skipped: 0, errors: [{ line: 5, detail: "entity Nobody not found" }] });

    const entries = await rest<{ id: string; content: string; tags: string[]; project: string; agent_id: string }[]>(target, target.owner, "/memory?project=people");
    const john = entries.find((entry) => entry.content.startsWith("John_Smith")) as (typeof entries)[number];
    expect(john).toMatchObject({ project: "people", agent_id: target.config.UI_AGENT_ID, tags: ["mcp-memory", "person"] });
    expect(john.content).toBe("John_Smith (person)\n- Speaks fluent Spanish\n- Graduated in 2019");
    const node = await rest<{ edges: { out: { dst: string; rel: string; note: string }[] } }>(target, target.owner, `/graph/${john.id}`);
    const anthropic = entries.find((entry) => entry.content.startsWith("Anthropic"))?.id;
    expect(node.edges.out).toEqual([expect.objectContaining({ dst: anthropic, rel: "relates_to", note: "works_at; admires" })]);
    const hits = await rest<{ id: string }[]>(target, target.owner, "/memory/search?q=fluent%20Spanish");
    expect(hits.map((hit) => hit.id)).toContain(john.id);

    const again = await importText(target, memoryJson, "?project=people");
    expect(again.body).toMatchObject({ imported: { entries: 0, edges: 0 }, skipped: 4 });
  });

  it("answers 404 for a memory.json project that does not exist", async () => {
    const target = await server();
    const response = await importText(target, JSON.stringify({ type: "entity", name: "X", entityType: "thing", observations: [] }), "?project=nowhere");
    expect(response.status).toBe(404);
  });

  it("takes JSON Lines only, a body of any length, each line within MAX_BODY_BYTES", async () => {
    const target = await server({ MAX_BODY_BYTES: "4096", MAX_CONTENT_BYTES: "2048" });
    const json = await target.request("/admin/import", { as: target.owner, body: { lines: [] } });
    expect(json.status).toBe(415);
    // The long line early in a long body: the refusal is the answer, not a connection cut mid-upload.
    const small = JSON.stringify({ type: "entity", name: "Small", entityType: "thing", observations: [] });
    const tail = `${small}\n`.repeat(20_000);
    const big = await importText(target, `${small}\n${JSON.stringify({ type: "entity", name: "Big", entityType: "thing", observations: ["x".repeat(5000)] })}\n${tail}`);
    expect(big.status).toBe(413);
    expect((big.body as unknown as { detail: string }).detail).toBe("line 2 of the body exceeds 4096 bytes");
    expect(await rest(target, target.owner, "/memory")).toEqual([]);
    // Forty lines of about a thousand bytes: over nine times MAX_BODY_BYTES in one request.
    const many = Array.from({ length: 40 }, (_, index) => JSON.stringify({ type: "entity", name: `Thing ${index}`, entityType: "thing", observations: ["y".repeat(900)] })).join("\n");
    expect(Buffer.byteLength(many)).toBeGreaterThan(9 * 4096);
    const answer = await importText(target, many, "?project=");
    expect(answer.status, answer.text).toBe(200);
    expect(answer.body).toMatchObject({ imported: { entries: 40 }, errors: [] });
  });

  it("answers a retry with the same Idempotency-Key as it answered the first time, and refuses the key with another body", async () => {
    const { source } = await populated();
    const text = await exportText(source);
    const target = await server();
    const headers = { "content-type": "application/x-ndjson", "Idempotency-Key": "move-1" };
    const first = await target.request<ImportAnswer>("/admin/import", { as: target.owner, body: text, headers });
    expect(first.body.imported.entries).toBe(3);
    const again = await target.request<ImportAnswer>("/admin/import", { as: target.owner, body: text, headers });
    expect(again.headers.get("idempotent-replayed")).toBe("true");
    expect(again.body).toEqual(first.body);
    const other = await target.request("/admin/import", { as: target.owner, body: `${text}\n`.replace("Tuesdays", "Mondays"), headers });
    expect(other.status).toBe(422);
  });
});

describe("export and import are the owner's", () => {
  it("refuses agents and viewers, and callers without credentials", async () => {
    const target = await server({ AGENT_KEYS: "watcher:watcher-static-key-0123:viewer" });
    const alice = await target.agent("alice");
    const viewer = { agentId: "watcher", apiKey: "watcher-static-key-0123" };
    for (const as of [alice, viewer]) {
      expect((await target.request("/admin/export", { as })).status).toBe(403);
      expect((await importText(target, "", "", as)).status).toBe(403);
    }
    expect((await target.request("/admin/export")).status).toBe(401);
    expect((await importText(target, "", "", null as unknown as Credentials)).status).toBe(401);
  });
});
