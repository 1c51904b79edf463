import http from "node:http";
import type { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { describe, expect } from "vitest";
import { textBodyOf } from "../../tools/layout.js";
import { MAX_SESSIONS_PER_AGENT } from "../../src/mcp/http.js";
import { catalogue } from "../../tools/catalogue.js";
import { ResourceUpdatedNotificationSchema } from "@modelcontextprotocol/sdk/types.js";
import { it, test } from "../helpers/fixtures.js";
import { descriptionsIn, mentionsHttp } from "../helpers/http-words.js";
import { callTool, mcpClient } from "../helpers/mcp.js";
import { eventually } from "../helpers/wait.js";
import { startTestServer, type Credentials } from "../helpers/server.js";

const INITIALIZE = {
  jsonrpc: "2.0",
  id: 1,
  method: "initialize",
  params: { protocolVersion: "2025-06-18", capabilities: {}, clientInfo: { name: "raw", version: "1" } },
};
const MCP_HEADERS = { accept: "application/json, text/event-stream", "content-type": "application/json" };

/** What a search hit carries over MCP unless the call asks for `verbose` (the contract's list). */
const COMPACT_HIT = ["id", "type", "score", "age", "headline", "snippet"];

describe("/mcp over Streamable HTTP", () => {
  const it = test
    .extend("alice", ({ server }) => server.agent("mcp-alice"))
    .extend("bob", ({ server }) => server.agent("mcp-bob"))
    // An MCP client to the test's server for an agent; every one is closed after the test.
    .extend("connect", ({ server }, { onCleanup }) => {
      const clients: Client[] = [];
      onCleanup(async () => {
        for (const client of clients) await client.close();
      });
      return async (as: Credentials): Promise<Client> => {
        const client = await mcpClient(server, as);
        clients.push(client);
        return client;
      };
    });
  it.override("serverEnv", { DIRECTIVE_WRITERS: "human" });

  it("refuses a request without credentials with 401 and a challenge: there is no fallback identity", async ({ server, alice }) => {
    const response = await fetch(new URL("/mcp", server.url), { method: "POST", headers: MCP_HEADERS, body: JSON.stringify(INITIALIZE) });
    expect(response.status).toBe(401);
    expect(response.headers.get("www-authenticate")).toBeTruthy();
    expect(await response.json()).toMatchObject({ code: "UNAUTHENTICATED" });
    const wrong = await fetch(new URL("/mcp", server.url), {
      method: "POST",
      headers: { ...MCP_HEADERS, "X-Agent-ID": alice.agentId, "X-API-Key": "cairn_wrong" },
      body: JSON.stringify(INITIALIZE),
    });
    expect(wrong.status).toBe(401);
  });

  it("refuses a request under a foreign Host or Origin (DNS rebinding) with 403; local tools on another port may connect", async ({ server, alice }) => {
    const port = new URL(server.url).port;
    const headers = { ...MCP_HEADERS, "X-Agent-ID": alice.agentId, "X-API-Key": alice.apiKey };
    // fetch will not send a Host of our choosing; node:http will.
    const status = (extra: Record<string, string>): Promise<number> =>
      new Promise((resolve, reject) => {
        const request = http.request(new URL("/mcp", server.url), { method: "POST", headers: { ...headers, ...extra } }, (response) => {
          response.resume();
          resolve(response.statusCode ?? 0);
        });
        request.on("error", reject);
        request.end(JSON.stringify(INITIALIZE));
      });
    expect(await status({ host: `attacker.example:${port}` })).toBe(403);
    expect(await status({ origin: "http://attacker.example" })).toBe(403);
    expect(await status({ host: `localhost:${port}` })).toBe(200);
    const local = await fetch(new URL("/mcp", server.url), { method: "POST", headers: { ...headers, origin: `http://localhost:${port}` }, body: JSON.stringify(INITIALIZE) });
    expect(local.status).toBe(200);
  });

  it("lists the standard toolset with schemas, annotations and the session routine", async ({ alice, connect }) => {
    const client = await connect(alice);
    expect(client.getInstructions()).toMatch(/session_start/);
    const { tools } = await client.listTools();
    const names = tools.map((tool) => tool.name);
    expect(names).toEqual(expect.arrayContaining(["memory_write", "memory_search", "task_claim", "message_send", "session_handoff", "session_start", "wait_for", "project_join"]));
    expect(names).not.toContain("agent_rotate_key");
    expect(names).not.toContain("event_stream");
    for (const tool of tools) {
      expect(tool.name).toMatch(/^[a-z]+_[a-z_]+$/);
      expect(tool.description?.length, tool.name).toBeGreaterThan(20);
      expect(tool.inputSchema.type).toBe("object");
      expect(tool.outputSchema).toBeUndefined();
    }
    const byName = new Map(tools.map((tool) => [tool.name, tool]));
    // Hints are listed where they differ from MCP's defaults (not read-only, destructive, not idempotent).
    expect(byName.get("memory_search")?.annotations).toEqual({ readOnlyHint: true, openWorldHint: false });
    expect(byName.get("memory_delete")?.annotations).toEqual({ idempotentHint: true, openWorldHint: false });
    expect(byName.get("memory_write")?.annotations).toEqual({ destructiveHint: false, openWorldHint: false });
    expect(byName.get("memory_write")?.inputSchema.required).toEqual(["content"]);
    // It moves the memory cursor (peek does not): a host must not take it for a free, repeatable read.
    expect(byName.get("session_start")?.annotations).toEqual({ destructiveHint: false, openWorldHint: false });
    expect(byName.get("memory_search")?.inputSchema.properties).toHaveProperty("verbose");
    // Its description asks for `if_match`: the argument is listed, though REST carries it as a header.
    expect(byName.get("memory_update")?.inputSchema.properties).toHaveProperty("if_match");
    expect(byName.get("wait_for")?.inputSchema.properties?.types).toMatchObject({ anyOf: [{ type: "array" }, { type: "string" }] });
    // An agent is not offered what its role may not do.
    expect(names).not.toContain("memory_set_headline");
    // Decisions are part of the session routine (CONTRACT §11's standard tier).
    expect(names).toEqual(expect.arrayContaining(["decision_record", "decision_list"]));
    expect(names).not.toContain("decision_get");
    expect(names).toEqual(expect.arrayContaining(["blueprint_instantiate", "blueprint_run_get", "compile_check"]));
    expect(names).not.toContain("blueprint_run_cancel");
    // Small enough to sit in every prompt (issue 26: at most 4,000 tokens; test/unit/mcp-tool-budget.test.ts).
    expect(JSON.stringify({ tools }).length / 4).toBeLessThanOrEqual(4000);
  });

  it("runs the primitives as tools with structured results, under the caller's identity", async ({ alice, bob, connect }) => {
    const client = await connect(alice);
    const written = await callTool<{ id: string; version: number; created: boolean }>(client, "memory_write", { content: "MCP note: the build cache lives in /var/cache/ci", tags: ["ci"] });
    expect(written.isError).toBe(false);
    // A write answers with what the writer needs; the entry itself is one memory_get away.
    expect(Object.keys(written.structured).sort()).toEqual(["created", "id", "version"]);
    expect(written.structured).toMatchObject({ version: 1, created: true });
    expect(JSON.parse(written.text)).toEqual(written.structured);
    const read = await callTool<{ agent_id: string; content: string }>(client, "memory_get", { id: written.structured.id });
    expect(read.structured).toMatchObject({ agent_id: alice.agentId, content: "MCP note: the build cache lives in /var/cache/ci" });
    const found = await callTool<{ result: { id: string }[] }>(client, "memory_search", { q: "build cache" });
    expect(found.structured.result.map((hit) => hit.id)).toContain(written.structured.id);
    const listed = await callTool<{ items: { id: string }[]; next_cursor: string | null }>(client, "memory_list", { limit: 1 });
    expect(listed.structured.items).toHaveLength(1);

    const task = await callTool<{ id: string; status: string }>(client, "task_create", { title: "MCP task" });
    const claimed = await callTool<{ status: string; assigned_to: string }>(client, "task_claim", { id: task.structured.id });
    expect(claimed.structured).toMatchObject({ status: "claimed", assigned_to: alice.agentId });
    const sent = await callTool<{ to: string }>(client, "message_send", { to: bob.agentId, body: "hello over MCP" });
    expect(sent.structured.to).toBe(bob.agentId);
    const pack = await callTool<{ claimed_tasks: { id: string }[] }>(client, "session_start", { peek: true });
    expect(pack.structured.claimed_tasks.map((row) => row.id)).toContain(task.structured.id);

    const bobsClient = await connect(bob);
    const inbox = await callTool<{ items: { body: string }[] }>(bobsClient, "message_inbox");
    expect(inbox.structured.items.map((message) => message.body)).toContain("hello over MCP");
  });

  it("speaks MCP, not HTTP, in its instructions, tools, resources and prompts", async ({ alice, connect }) => {
    const client = await connect(alice);
    const { tools } = await client.listTools();
    const { resources } = await client.listResources();
    const { prompts } = await client.listPrompts();
    const texts = [
      client.getInstructions() ?? "",
      ...tools.flatMap((tool) => [tool.description ?? "", ...descriptionsIn(tool.inputSchema)]),
      ...resources.map((resource) => resource.description ?? ""),
      ...prompts.map((prompt) => prompt.description ?? ""),
    ];
    for (const prompt of prompts) texts.push(JSON.stringify((await client.getPrompt({ name: prompt.name })).messages));
    expect(texts.filter(mentionsHttp)).toEqual([]);
  });

  it("returns compact search hits unless the call asks for verbose ones", async ({ server, alice, connect }) => {
    const client = await connect(alice);
    await callTool(client, "memory_write", { content: "Compact hits: the staging database is rebuilt every Sunday night", tags: ["staging"] });
    const query = "when is the staging database rebuilt";
    const compact = await callTool<{ result: Record<string, unknown>[] }>(client, "memory_search", { q: query });
    expect(compact.structured.result.length).toBeGreaterThan(0);
    for (const hit of compact.structured.result) expect(COMPACT_HIT).toEqual(expect.arrayContaining(Object.keys(hit)));
    const [top] = compact.structured.result;
    expect(top).toMatchObject({ type: "memory", age: "now", headline: "Compact hits: the staging database is rebuilt every Sunday night" });
    // The model reads lines, not JSON: the id, type, score and age, then the headline.
    expect(compact.text.split("\n").slice(0, 2)).toEqual([`${String(top?.id)} memory ${Number(top?.score).toFixed(2)} now`, "Compact hits: the staging database is rebuilt every Sunday night"]);
    // REST answers the same compact hits on request.
    const restCompact = await server.request<Record<string, unknown>[]>(`/memory/search?q=${encodeURIComponent(query)}&compact=true`, { as: alice });
    expect(restCompact.body).toEqual(compact.structured.result);

    const verbose = await callTool<{ result: Record<string, unknown>[] }>(client, "memory_search", { q: query, verbose: true });
    const rest = await server.request<Record<string, unknown>[]>(`/memory/search?q=${encodeURIComponent(query)}`, { as: alice });
    expect(verbose.structured.result.map((hit) => hit.id)).toEqual(compact.structured.result.map((hit) => hit.id));
    expect(verbose.structured.result.map((hit) => Object.keys(hit).sort())).toEqual(rest.body.map((hit) => Object.keys(hit).sort()));
    expect(JSON.parse(verbose.text)).toEqual(verbose.structured);
    // The REST search is unchanged: whole hits, and no `verbose` parameter.
    expect(Object.keys(rest.body[0] ?? {})).toEqual(expect.arrayContaining(["score", "version", "read_count"]));
    expect((await server.request(`/memory/search?q=staging&verbose=true`, { as: alice })).status).toBe(422);

    // A page of entries is compact too, with the cursor of the next page after the lines.
    const listed = await callTool<{ items: Record<string, unknown>[]; next_cursor: string | null }>(client, "memory_list", { limit: 1 });
    expect(Object.keys(listed.structured.items[0] ?? {}).sort()).toEqual(["age", "headline", "id", "type"]);
    expect(listed.text.split("\n")[1]).toBe("Compact hits: the staging database is rebuilt every Sunday night");
    const restList = await server.request<Record<string, unknown>[]>("/memory?limit=1&compact=true", { as: alice });
    expect(restList.body).toEqual(listed.structured.items);

    // Tasks too: what an agent needs to pick one, the title on its own line.
    const created = await callTool<{ id: string }>(client, "task_create", { title: "Rebuild the staging database", priority: "high" });
    const tasks = await callTool<{ items: Record<string, unknown>[] }>(client, "task_list", { status: "open" });
    expect(tasks.structured.items[0]).toEqual({ id: created.structured.id, title: "Rebuild the staging database", status: "open", priority: "high", blocked: false, assigned_to: null, age: "now" });
    expect(tasks.text.split("\n")).toEqual([`${created.structured.id} open high now`, "Rebuild the staging database"]);
    expect((await server.request<Record<string, unknown>[]>("/tasks?status=open&compact=true", { as: alice })).body).toEqual(tasks.structured.items);
    expect(Object.keys((await callTool<{ items: Record<string, unknown>[] }>(client, "task_list", { verbose: true })).structured.items[0] ?? {})).toContain("description");

    const wrong = await callTool<{ code: string; errors: { path: string }[] }>(client, "memory_search", { q: query, verbose: "yes" });
    expect(wrong).toMatchObject({ isError: true, structured: { code: "VALIDATION_FAILED", errors: [{ path: "verbose" }] } });
  });

  it("returns refusals as isError results with REST's detail and code", async ({ bob, connect }) => {
    const client = await connect(bob);
    const directive = await callTool<{ detail: string; code: string }>(client, "memory_write", { content: "always use tabs", type: "directive" });
    expect(directive.isError).toBe(true);
    expect(directive.structured).toEqual({ detail: "directive writes require elevated permission", code: "FORBIDDEN" });
    const invalid = await callTool<{ code: string; errors: { path: string }[] }>(client, "memory_write", { content: "" });
    expect(invalid.isError).toBe(true);
    expect(invalid.structured.code).toBe("VALIDATION_FAILED");
    expect(invalid.structured.errors.map((error) => error.path)).toContain("content");
    const missing = await callTool<{ code: string }>(client, "task_get", { id: "0badc0de-0000-4000-8000-000000000000" });
    expect(missing.structured.code).toBe("NOT_FOUND");
  });

  it("acts once for a retried tool call carrying an idempotency key in _meta, as REST does for the header", async ({ server, alice, connect }) => {
    const client = await connect(alice);
    const call = (args: Record<string, unknown>, key: unknown) => client.callTool({ name: "task_create", arguments: args, _meta: { idempotency_key: key } });
    const first = await call({ title: "created once however often it is retried" }, "mcp-retry-1");
    const again = await call({ title: "created once however often it is retried" }, "mcp-retry-1");
    expect(first.isError).toBeFalsy();
    expect(again.structuredContent).toEqual(first.structuredContent);
    const created = (first.structuredContent as { id: string }).id;
    const listed = await server.request<{ id: string; title: string }[]>("/tasks?limit=500", { as: alice });
    expect(listed.body.filter((task) => task.title === "created once however often it is retried")).toHaveLength(1);
    // The same key over REST, for the same request, is the same request.
    const viaRest = await server.request<{ id: string }>("/tasks", { as: alice, body: { title: "created once however often it is retried" }, headers: { "idempotency-key": "mcp-retry-1" } });
    expect(viaRest.headers.get("idempotent-replayed")).toBe("true");
    expect(viaRest.body.id).toBe(created);

    const reused = await call({ title: "a different request" }, "mcp-retry-1");
    expect(reused.isError).toBe(true);
    expect(reused.structuredContent).toMatchObject({ detail: "idempotency key reused with a different request", code: "VALIDATION_FAILED" });
    // A refusal is the answer too: replayed as the same isError result.
    const refusedOnce = await client.callTool({ name: "task_claim", arguments: { id: "0badc0de-0000-4000-8000-000000000000" }, _meta: { idempotency_key: "mcp-refused" } });
    const refusedAgain = await client.callTool({ name: "task_claim", arguments: { id: "0badc0de-0000-4000-8000-000000000000" }, _meta: { idempotency_key: "mcp-refused" } });
    expect(refusedOnce).toMatchObject({ isError: true, structuredContent: { code: "NOT_FOUND" } });
    expect(refusedAgain).toEqual(refusedOnce);
    for (const bad of ["", "k".repeat(201), 42]) {
      const invalid = await call({ title: "never created" }, bad);
      expect(invalid.isError).toBe(true);
      expect(invalid.structuredContent).toMatchObject({ code: "VALIDATION_FAILED", errors: [{ path: "_meta.idempotency_key" }] });
    }
    // Without a key, a retry acts again.
    await call({ title: "no key, twice" }, undefined);
    await call({ title: "no key, twice" }, undefined);
    const twice = await server.request<{ title: string }[]>("/tasks?limit=500", { as: alice });
    expect(twice.body.filter((task) => task.title === "no key, twice")).toHaveLength(2);
  });

  it("waits with wait_for, returning the event or null at the timeout", async ({ server, alice, bob, connect }) => {
    const client = await connect(alice);
    const quiet = await callTool<{ result: null }>(client, "wait_for", { types: ["never.happens"], timeout: 1 });
    expect(quiet).toMatchObject({ isError: false, structured: { result: null } });
    // `types` is a list or, as in the REST query, one comma-separated string, checked the same way.
    // Each wait starts from a seq read before its event is sent, so it finds the event however late it begins.
    const newest = async (): Promise<number> => (await server.request<{ seq: number }>("/events", { as: bob, body: { type: "test.marker", payload: {} } })).body.seq;
    const listedAsText = callTool<{ result: { type: string } }>(client, "wait_for", { types: "never.happens, task.created", timeout: 10, after_seq: await newest() });
    await server.request("/tasks", { as: bob, body: { title: "wakes a wait_for given its types as text", project: null } });
    expect((await listedAsText).structured.result.type).toBe("task.created");
    const badType = await callTool<{ code: string; errors: { path: string }[] }>(client, "wait_for", { types: "task.created,Not A Type", timeout: 1 });
    expect(badType).toMatchObject({ isError: true, structured: { code: "VALIDATION_FAILED", errors: [{ path: "types.1" }] } });
    const waiting = callTool<{ result: { type: string } }>(client, "wait_for", { types: ["message.received"], timeout: 10, after_seq: await newest() });
    await server.request("/messages", { as: bob, body: { to: alice.agentId, body: "wake up" } });
    expect((await waiting).structured.result.type).toBe("message.received");
  });

  it("offers inbox, directives and handoff as resources, and says when the inbox changes", async ({ server, alice, bob, connect }) => {
    const client = await connect(alice);
    const updates: string[] = [];
    client.setNotificationHandler(ResourceUpdatedNotificationSchema, (notification) => {
      updates.push(notification.params.uri);
    });
    const { resources } = await client.listResources();
    expect(resources.map((resource) => resource.uri)).toEqual(["cairn://inbox", "cairn://directives", "cairn://handoff"]);
    const inbox = async (): Promise<{ body: string }[]> =>
      JSON.parse(((await client.readResource({ uri: "cairn://inbox" })).contents[0] as { text: string }).text) as { body: string }[];
    await client.subscribeResource({ uri: "cairn://inbox" });
    await client.subscribeResource({ uri: "cairn://directives" });
    // A message between others changes nothing alice can see: no notification. A new directive,
    // which she does see, comes after it: once its notification is in, one for the message would be too.
    await server.request("/messages", { as: bob, body: { to: server.owner.agentId, body: "not for alice" } });
    await server.request("/memory", { as: server.owner, body: { content: "Answer every message within a day", type: "directive", project: null } });
    expect(await eventually(() => updates.includes("cairn://directives"), 5000)).toBe(true);
    expect(updates).toEqual(["cairn://directives"]);
    await server.request("/messages", { as: bob, body: { to: alice.agentId, body: "resource ping" } });
    expect(await eventually(() => updates.includes("cairn://inbox"), 5000)).toBe(true);
    expect((await inbox()).map((message) => message.body)).toContain("resource ping");
    const handoff = JSON.parse(((await client.readResource({ uri: "cairn://handoff" })).contents[0] as { text: string }).text) as { unread_messages: unknown[] };
    expect(handoff.unread_messages.length).toBeGreaterThan(0);
    await expect(client.readResource({ uri: "cairn://elsewhere" })).rejects.toThrow();
  });

  it("offers start_session and end_session prompts", async ({ alice, connect }) => {
    const client = await connect(alice);
    const { prompts } = await client.listPrompts();
    expect(prompts.map((prompt) => prompt.name)).toEqual(["start_session", "end_session"]);
    const start = await client.getPrompt({ name: "start_session" });
    expect(JSON.stringify(start.messages)).toContain("session_start");
    const end = await client.getPrompt({ name: "end_session" });
    expect(JSON.stringify(end.messages)).toContain("session_handoff");
  });

  it("keeps a session to the agent that opened it: another agent presenting its id gets 404", async ({ server, alice, bob }) => {
    const opened = await fetch(new URL("/mcp", server.url), {
      method: "POST",
      headers: { ...MCP_HEADERS, "X-Agent-ID": alice.agentId, "X-API-Key": alice.apiKey },
      body: JSON.stringify(INITIALIZE),
    });
    const sessionId = opened.headers.get("mcp-session-id") as string;
    expect(sessionId).toBeTruthy();
    const hijack = await fetch(new URL("/mcp", server.url), {
      method: "POST",
      headers: { ...MCP_HEADERS, "X-Agent-ID": bob.agentId, "X-API-Key": bob.apiKey, "mcp-session-id": sessionId, "mcp-protocol-version": "2025-06-18" },
      body: JSON.stringify({ jsonrpc: "2.0", id: 2, method: "tools/list" }),
    });
    expect(hijack.status).toBe(404);
  });
});

describe("an agent's MCP sessions", () => {
  it("never lock the agent out: past the limit, opening one closes the least recently used", async ({ server }) => {
    const agent = await server.agent("many-hosts");
    const open = async (): Promise<string> => {
      const response = await fetch(new URL("/mcp", server.url), {
        method: "POST",
        headers: { ...MCP_HEADERS, "X-Agent-ID": agent.agentId, "X-API-Key": agent.apiKey },
        body: JSON.stringify(INITIALIZE),
      });
      expect(response.status).toBe(200);
      return response.headers.get("mcp-session-id") as string;
    };
    const use = (sessionId: string) =>
      fetch(new URL("/mcp", server.url), {
        method: "POST",
        headers: { ...MCP_HEADERS, "X-Agent-ID": agent.agentId, "X-API-Key": agent.apiKey, "mcp-session-id": sessionId, "mcp-protocol-version": "2025-06-18" },
        body: JSON.stringify({ jsonrpc: "2.0", id: 2, method: "tools/list" }),
      });
    // Hosts that were killed: sessions opened and never ended, as many as the limit allows.
    const abandoned: string[] = [];
    for (let index = 0; index < MAX_SESSIONS_PER_AGENT; index++) abandoned.push(await open());
    // The newest of them is still in use, so it is not the one that makes way.
    expect((await use(abandoned.at(-1) as string)).status).toBe(200);
    const next = await open();
    expect((await use(next)).status).toBe(200);
    expect((await use(abandoned[0] as string)).status).toBe(404);
    expect((await use(abandoned.at(-1) as string)).status).toBe(200);
  });
});

describe("tool sets", () => {
  it("lists at most 12 tools in core", async () => {
    const server = await startTestServer({ MCP_TOOLSET: "core" });
    try {
      const client = await mcpClient(server, server.owner);
      const { tools } = await client.listTools();
      expect(tools.length).toBeLessThanOrEqual(12);
      expect(tools.map((tool) => tool.name)).toEqual(expect.arrayContaining(["session_start", "memory_search", "task_claim", "session_handoff", "wait_for"]));
      await client.close();
    } finally {
      await server.close();
    }
  });

  it("lists every operation the role may call in all, with output schemas the results satisfy", async () => {
    const server = await startTestServer({ MCP_TOOLSET: "all" });
    try {
      const client = await mcpClient(server, server.owner);
      const { tools } = await client.listTools();
      // Files of text (the JSON Lines export and import, the feeds) and what only machines read (restOnly) are REST's alone.
      const movesAFile = (operation: (typeof catalogue)[number]): boolean => operation.http.contentType !== undefined || textBodyOf(operation) !== undefined;
      const expected = catalogue.filter(
        (operation) =>
          operation.access === "agent" && !operation.restOnly && operation.kind !== "stream" && !movesAFile(operation) && (!operation.roles || operation.roles.includes("owner")),
      );
      expect(tools).toHaveLength(expected.length);
      expect(tools.filter((tool) => tool.outputSchema).length).toBeGreaterThan(30);
      // The SDK client checks structuredContent against the listed outputSchema: these would throw on a mismatch.
      const written = await callTool<{ id: string }>(client, "memory_write", { content: "schema-checked note" });
      await callTool(client, "memory_list", { limit: 2 });
      await callTool(client, "memory_get", { id: written.structured.id });
      for (const verbose of [false, true]) {
        const found = await callTool<{ result: unknown[] }>(client, "memory_search", { q: "schema-checked note", verbose });
        expect(found.structured.result.length).toBeGreaterThan(0);
      }
      await callTool(client, "wait_for", { timeout: 1, types: ["never.happens"] });
      await callTool(client, "wait_for", { timeout: 1, types: "never.happens,also.never" });
      await callTool(client, "agent_me");
      await client.close();
    } finally {
      await server.close();
    }
  });
});
