import { describe, expect } from "vitest";
import { test } from "../helpers/fixtures.js";
import { callTool, mcpClient } from "../helpers/mcp.js";
import type { Credentials, TestServer } from "../helpers/server.js";

// Issue 26: `max_tokens` on search, session_start and an agent's pack — filled best first, never
// over, never a cut entry, what was left out counted — compact answers on request over REST (and
// by default over MCP), and the tokens served per agent and per tool in /metrics. Runs on whichever
// backend the suite runs on.

interface Hit {
  id: string;
  content?: string;
  headline?: string;
}

interface Pack {
  last_handoff: { summary: string } | null;
  memory_delta_since_last_seen: { id: string; content: string }[];
  delta_truncated: boolean;
  unread_messages: { id: string }[];
  claimed_tasks: { id: string }[];
  directives: { id: string }[];
  left_out?: Record<string, number>;
}

const it = test
  .extend("alice", ({ server }) => server.agent("alice"))
  .extend("bob", ({ server }) => server.agent("bob"));

/** Tokens as the server counts them: four characters of the JSON answer each. */
const tokens = (text: string): number => Math.ceil(text.length / 4);

async function write(server: TestServer, as: Credentials, content: string): Promise<string> {
  const response = await server.request<{ id: string }>("/memory", { as, body: { content, project: null, allow_duplicate: true } });
  expect(response.status, response.text).toBe(201);
  return response.body.id;
}

/** Ten notes about deploys, three of them long. */
async function deployNotes(server: TestServer, as: Credentials): Promise<void> {
  for (let index = 0; index < 10; index++) {
    const long = index % 3 === 0 ? " The rollout waits for the canary to stay healthy for an hour before it goes on to every region.".repeat(4) : "";
    await write(server, as, `Deploy note ${index}: deploys go out on Tuesdays after the freeze, window ${index}.${long}`);
  }
}

describe("max_tokens on a search", () => {
  it("keeps the best hits that fit, whole, and counts the rest", async ({ server, alice }) => {
    await deployNotes(server, alice);
    const all = await server.request<Hit[]>("/memory/search?q=deploys%20Tuesdays&limit=20", { as: alice });
    expect(all.body.length).toBe(10);
    expect(all.headers.get("x-left-out")).toBeNull();
    for (const budget of [100, 400, 900]) {
      const cut = await server.request<Hit[]>(`/memory/search?q=deploys%20Tuesdays&limit=20&max_tokens=${budget}`, { as: alice });
      expect(cut.status, cut.text).toBe(200);
      expect(tokens(cut.text), `budget ${budget}`).toBeLessThanOrEqual(budget);
      expect(Number(cut.headers.get("x-left-out"))).toBe(10 - cut.body.length);
      // Best first: the kept hits in the unbudgeted order, each whole.
      const order = all.body.map((hit) => hit.id);
      const positions = cut.body.map((hit) => order.indexOf(hit.id));
      expect(positions).toEqual([...positions].sort((a, b) => a - b));
      for (const hit of cut.body) expect(hit.content).toBe(all.body.find((whole) => whole.id === hit.id)?.content);
    }
    // A whole hit is a few hundred characters: a budget that holds none answers with none.
    expect((await server.request<Hit[]>("/memory/search?q=deploys&max_tokens=100", { as: alice })).body).toEqual([]);
    expect((await server.request("/memory/search?q=deploys&max_tokens=10", { as: alice })).status).toBe(422);
  });

  it("fits more hits in compact form, and says over MCP how many did not fit", async ({ server, alice }) => {
    await deployNotes(server, alice);
    const whole = await server.request<Hit[]>("/memory/search?q=deploys%20Tuesdays&limit=20&max_tokens=400", { as: alice });
    const compact = await server.request<Hit[]>("/memory/search?q=deploys%20Tuesdays&limit=20&max_tokens=400&compact=true", { as: alice });
    expect(tokens(compact.text)).toBeLessThanOrEqual(400);
    expect(compact.body.length).toBeGreaterThan(whole.body.length);
    for (const hit of compact.body) expect(hit.headline).toMatch(/^Deploy note \d/);

    const client = await mcpClient(server, alice);
    try {
      const found = await callTool<{ result: Hit[]; left_out: number }>(client, "memory_search", { q: "deploys Tuesdays", limit: 20, max_tokens: 150 });
      expect(found.structured.result.map((hit) => hit.id)).toEqual(
        (await server.request<Hit[]>("/memory/search?q=deploys%20Tuesdays&limit=20&max_tokens=150&compact=true", { as: alice })).body.map((hit) => hit.id),
      );
      expect(found.structured.left_out).toBe(10 - found.structured.result.length);
      expect(found.structured.left_out).toBeGreaterThan(0);
      expect(found.text.endsWith(`${found.structured.left_out} more did not fit max_tokens`)).toBe(true);
      // A default 10-hit search over MCP stays small (the number is the MCP bench's to report).
      const plain = await callTool<{ result: Hit[] }>(client, "memory_search", { q: "deploys Tuesdays" });
      expect(plain.structured.result).toHaveLength(10);
      expect(tokens(plain.text)).toBeLessThanOrEqual(500);
    } finally {
      await client.close();
    }
  });
});

describe("max_tokens on a session's pack", () => {
  it("fills the handoff, directives, tasks and messages first, cuts the delta at an entry, and continues it next time", async ({ server, alice, bob }) => {
    const directive = await server.request<{ id: string }>("/memory", { as: server.owner, body: { content: "Never deploy on Fridays.", type: "directive", project: null } });
    expect(directive.status, directive.text).toBe(201);
    const task = await server.request<{ id: string }>("/tasks", { as: bob, body: { title: "ship the parser", project: null } });
    expect((await server.request(`/tasks/${task.body.id}/claim`, { as: alice, body: {} })).status).toBe(200);
    expect((await server.request("/sessions/handoff", { as: alice, body: { summary: "parser half done", next_steps: ["tokenizer"] } })).status).toBe(201);
    expect((await server.request("/messages", { as: bob, body: { to: "alice", body: "the parser is yours" } })).status).toBe(201);
    const written: string[] = [];
    for (let index = 0; index < 12; index++) written.push(await write(server, bob, `Change ${index}: ${"the tokenizer now keeps line numbers. ".repeat(3)}`));

    const budget = 1_500;
    const first = await server.request<Pack>(`/sessions/handoff?max_tokens=${budget}`, { as: alice });
    expect(first.status, first.text).toBe(200);
    expect(tokens(first.text)).toBeLessThanOrEqual(budget);
    expect(first.body.last_handoff?.summary).toBe("parser half done");
    expect(first.body.directives.map((entry) => entry.id)).toContain(directive.body.id);
    expect(first.body.claimed_tasks.map((row) => row.id)).toEqual([task.body.id]);
    expect(first.body.unread_messages).toHaveLength(1);
    // The directive is a change too, made first.
    const changes = [directive.body.id, ...written];
    const shown = first.body.memory_delta_since_last_seen.map((entry) => entry.id);
    expect(shown.length).toBeGreaterThan(1);
    expect(shown.length).toBeLessThan(changes.length);
    // A prefix of the changes, in the order they were made, each whole.
    expect(shown).toEqual(changes.slice(0, shown.length));
    expect(first.body.memory_delta_since_last_seen[1]?.content).toBe(`Change 0: ${"the tokenizer now keeps line numbers. ".repeat(3)}`);
    expect(first.body.delta_truncated).toBe(true);
    expect(first.body.left_out).toEqual({ last_handoff: 0, directives: 0, claimed_tasks: 0, unread_messages: 0, memory_delta: changes.length - shown.length });

    // The cursor moved past what was shown and only that: the rest comes next, nothing lost.
    const rest = await server.request<Pack>("/sessions/handoff", { as: alice });
    expect(rest.body.memory_delta_since_last_seen.map((entry) => entry.id)).toEqual(changes.slice(shown.length));
    expect(rest.body).not.toHaveProperty("left_out");

    // A budget too small for the delta leaves it whole for later; the frame itself always fits.
    const tiny = await server.request<Pack>("/sessions/handoff?max_tokens=100&peek=true", { as: alice });
    expect(tokens(tiny.text)).toBeLessThanOrEqual(100);
    expect(tiny.body.left_out?.last_handoff).toBe(1);
    expect(tiny.body.left_out?.directives).toBeGreaterThan(0);
  });

  it("bounds an owner's read of an agent's pack the same way, over MCP too", async ({ server, alice, bob }) => {
    for (let index = 0; index < 8; index++) await write(server, bob, `Owner view ${index}: ${"a note that takes some room in the pack. ".repeat(4)}`);
    const pack = await server.request<Pack>("/sessions/handoff/alice?max_tokens=300", { as: server.owner });
    expect(tokens(pack.text)).toBeLessThanOrEqual(300);
    expect(pack.body.left_out?.memory_delta).toBe(8 - pack.body.memory_delta_since_last_seen.length);
    expect(pack.body.left_out?.memory_delta).toBeGreaterThan(0);

    // The compact form is what the budget is spent on: more of the delta fits.
    const compact = await server.request<Pack>("/sessions/handoff/alice?max_tokens=300&compact=true", { as: server.owner });
    expect(tokens(compact.text)).toBeLessThanOrEqual(300);
    expect(compact.body.left_out?.memory_delta).toBeLessThan(pack.body.left_out?.memory_delta ?? 0);

    const client = await mcpClient(server, alice);
    try {
      const started = await callTool<Pack>(client, "session_start", { max_tokens: 300, peek: true });
      expect(tokens(JSON.stringify(started.structured))).toBeLessThanOrEqual(300);
      expect(started.structured.left_out?.memory_delta).toBe(compact.body.left_out?.memory_delta);
      const whole = await callTool<Pack>(client, "session_start", { max_tokens: 300, peek: true, verbose: true });
      expect(whole.structured.left_out?.memory_delta).toBe(pack.body.left_out?.memory_delta);
    } finally {
      await client.close();
    }
  });
});

describe("compact writes", () => {
  it("answer with the id, version and verdict on request over REST", async ({ server, alice }) => {
    const created = await server.request<Record<string, unknown>>("/memory", { as: alice, body: { content: "The build cache lives in /var/cache/ci.", project: null, compact: true } });
    expect(created.status).toBe(201);
    expect(Object.keys(created.body).sort()).toEqual(["created", "id", "version"]);
    expect(created.body).toMatchObject({ version: 1, created: true });
    const again = await server.request<Record<string, unknown>>("/memory", { as: alice, body: { content: "The build cache lives in /var/cache/ci.", project: null, compact: true } });
    expect(again.status).toBe(200);
    expect(Object.keys(again.body).sort()).toEqual(["created", "duplicate_of", "id", "similarity", "version"]);
    expect(again.body).toMatchObject({ id: created.body.id, created: false, duplicate_of: created.body.id });
    const whole = await server.request<Record<string, unknown>>("/memory", { as: alice, body: { content: "CI keeps its cache under /var/cache/ci on every runner.", project: null } });
    expect(whole.body).toHaveProperty("content");
    // A keyed write answers in the form asked for, and its retry gets that same answer.
    const keyed = { as: alice, headers: { "idempotency-key": "compact-once" }, body: { content: "Keyed: staging resets nightly.", project: null, compact: true } };
    const once = await server.request<Record<string, unknown>>("/memory", keyed);
    const retried = await server.request<Record<string, unknown>>("/memory", keyed);
    expect(once.status, once.text).toBe(201);
    expect(Object.keys(once.body).sort()).toEqual(["created", "id", "version"]);
    expect(retried.headers.get("idempotent-replayed")).toBe("true");
    expect(retried.body).toEqual(once.body);
  });
});

describe("tokens served", () => {
  it("are counted per agent, and per operation and transport", async ({ server, alice }) => {
    await write(server, alice, "Metrics note: deploys go out on Tuesdays.");
    await server.request("/memory/search?q=deploys", { as: alice });
    const client = await mcpClient(server, alice);
    try {
      await callTool(client, "memory_search", { q: "deploys" });
    } finally {
      await client.close();
    }
    const metrics = (await server.request<string>("/metrics", { as: server.owner })).text;
    const value = (pattern: RegExp): number => Number(pattern.exec(metrics)?.[1] ?? "NaN");
    expect(value(/^cairn_tokens_served_total\{operation="memory_search",transport="rest"\} (\d+)$/m)).toBeGreaterThan(0);
    expect(value(/^cairn_tokens_served_total\{operation="memory_search",transport="mcp"\} (\d+)$/m)).toBeGreaterThan(0);
    expect(value(/^cairn_agent_tokens_served_total\{agent="alice"\} (\d+)$/m)).toBeGreaterThan(0);
  });
});

describe("a session's pack in compact form", () => {
  it("lists each change and claimed task compactly over MCP, keeps what a session acts on whole, and is REST's compact=true", async ({ server, alice, bob }) => {
    await deployNotes(server, bob);
    const gone = await write(server, bob, "A note bob takes back");
    expect((await server.request(`/memory/${gone}`, { as: bob, method: "DELETE" })).status).toBe(204);
    const task = await server.request<{ id: string }>("/tasks", { as: alice, body: { title: "Roll out the canary", project: null } });
    expect((await server.request(`/tasks/${task.body.id}/claim`, { as: alice, method: "POST" })).status).toBe(200);
    await server.request("/messages", { as: bob, body: { to: "alice", body: "The canary is yours: watch the error budget." } });
    await server.request("/memory", { as: server.owner, body: { type: "directive", content: "Never deploy on Fridays", project: null } });

    const whole = await server.request<Pack>("/sessions/handoff?peek=true", { as: alice });
    const compact = await server.request<Record<string, unknown> & Pack>("/sessions/handoff?peek=true&compact=true", { as: alice });
    expect(compact.body.memory_delta_since_last_seen.map((change) => change.id)).toEqual(whole.body.memory_delta_since_last_seen.map((change) => change.id));
    for (const change of compact.body.memory_delta_since_last_seen as Record<string, unknown>[]) {
      if (change.id === gone) expect(change).toHaveProperty("deleted_at");
      else expect(Object.keys(change).filter((key) => key !== "snippet")).toEqual(["id", "type", "age", "headline"]);
    }
    expect(Object.keys(compact.body.claimed_tasks[0] ?? {})).toEqual(["id", "title", "status", "priority", "blocked", "assigned_to", "age"]);
    // The directives and messages are whole: a session acts on every word of them.
    expect(compact.body.directives).toEqual(whole.body.directives);
    expect(compact.body.unread_messages).toEqual(whole.body.unread_messages);
    expect(tokens(compact.text)).toBeLessThan(tokens(whole.text) / 2);

    const client = await mcpClient(server, alice);
    try {
      const started = await callTool<Pack>(client, "session_start", { peek: true });
      expect(started.structured.memory_delta_since_last_seen).toEqual(compact.body.memory_delta_since_last_seen);
      expect(started.structured.claimed_tasks).toEqual(compact.body.claimed_tasks);
      const verbose = await callTool<Pack>(client, "session_start", { peek: true, verbose: true });
      expect(verbose.structured.memory_delta_since_last_seen).toEqual(whole.body.memory_delta_since_last_seen);
    } finally {
      await client.close();
    }
  });
});
