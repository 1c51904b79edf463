import { createHash } from "node:crypto";
import { afterEach, describe, expect } from "vitest";
import { test } from "../helpers/fixtures.js";
import { callTool, mcpClient } from "../helpers/mcp.js";
import { rawRequest } from "../helpers/raw.js";
import { startTestServer, type Credentials, type ErrorBody, type TestServer } from "../helpers/server.js";

// Issue 25, item 5: the review's low findings, each as the rule it now keeps.

const it = test.extend("alice", ({ server }) => server.agent("alice"));

const keys = (as: Credentials): Record<string, string> => ({ "x-agent-id": as.agentId, "x-api-key": as.apiKey });

/** A POST of exactly these bytes. */
const send = (server: TestServer, path: string, as: Credentials, body: string | Buffer, contentType = "application/json") =>
  rawRequest<ErrorBody>(`${server.url}${path}`, { method: "POST", headers: { ...keys(as), "content-type": contentType }, body });

const memoryCount = async (server: TestServer, as: Credentials): Promise<number> => ((await server.request<unknown[]>("/memory?project=", { as })).body).length;

const jsonLines = (server: TestServer, text: string | Buffer) => send(server, "/admin/import", server.owner, text, "application/x-ndjson");

describe("JSON bodies are read as sent", () => {
  it("refuses a body that is not valid UTF-8 with 400, where it once stored U+FFFD", async ({ server, alice }) => {
    const broken = [Buffer.from([0xc3, 0x28]), Buffer.from([0xed, 0xa0, 0x80]), Buffer.from([0xc0, 0xaf]), Buffer.from([0xff])];
    for (const bytes of broken) {
      const response = await send(server, "/memory", alice, Buffer.concat([Buffer.from('{"content":"caf'), bytes, Buffer.from('", "project": null}')]));
      expect(response.status, response.text).toBe(400);
      expect(response.body).toEqual({ detail: "request body is not valid utf-8", code: "BAD_REQUEST" });
    }
    expect(await memoryCount(server, alice)).toBe(0);
    // The import's JSON Lines are held to the same rule.
    const line = Buffer.concat([Buffer.from('{"type":"entity","name":"caf'), Buffer.from([0xff]), Buffer.from('","entityType":"x","observations":[]}\n')]);
    expect((await jsonLines(server, line)).status).toBe(400);
    // A charset other than UTF-8 is refused, not guessed at.
    expect((await send(server, "/memory", alice, '{"content":"x"}', "application/json; charset=latin1")).status).toBe(415);

    const text = "café — naïve ✓ 日本語 🚀";
    const stored = await send(server, "/memory", alice, Buffer.from(JSON.stringify({ content: text, project: null }), "utf8"));
    expect(stored.status, stored.text).toBe(201);
    expect((stored.body as unknown as { content: string }).content).toBe(text);
  });

  it("refuses a key twice in one object with 422 naming its path, where the last once won", async ({ server, alice }) => {
    const twice = await send(server, "/memory", alice, '{"content":"a","project":null,"content":"b"}');
    expect(twice.status, twice.text).toBe(422);
    expect(twice.body).toMatchObject({ code: "VALIDATION_FAILED", errors: [{ path: "content", message: "duplicate key" }] });
    // Spelt with an escape, it is still the same key.
    const escaped = await send(server, "/memory", alice, '{"content":"a","cont\\u0065nt":"b"}');
    expect(escaped.body.errors).toEqual([{ path: "content", message: "duplicate key" }]);
    const nested = await send(server, "/blueprints", alice, JSON.stringify({ name: "plan", title: "Plan", nodes: [{ id: "a", title: "A" }] }).replace('"title":"A"', '"title":"A","title":"B"'));
    expect(nested.status, nested.text).toBe(422);
    expect(nested.body.errors).toEqual([{ path: "nodes.0.title", message: "duplicate key" }]);
    expect(await memoryCount(server, alice)).toBe(0);

    // The same key in two objects is no repeat.
    const siblings = { name: "plan", title: "Plan", params: [{ name: "a", type: "string" }, { name: "b", type: "string" }], nodes: [{ id: "a", title: "A" }, { id: "b", title: "B", needs: ["a"] }] };
    expect((await send(server, "/blueprints", alice, JSON.stringify(siblings))).status).toBe(201);

    // MCP's body goes through the same reader, and is refused in JSON-RPC's terms.
    const rpc = '{"jsonrpc":"2.0","id":1,"id":2,"method":"tools/list"}';
    const mcp = await rawRequest<{ error: { code: number; data: ErrorBody } }>(`${server.url}/mcp`, {
      method: "POST",
      headers: { ...keys(alice), "content-type": "application/json", accept: "application/json, text/event-stream" },
      body: rpc,
    });
    expect(mcp.status).toBe(400);
    expect(mcp.body.error).toMatchObject({ code: -32600, data: { errors: [{ path: "id", message: "duplicate key" }] } });

    // An import line with a key twice is reported and left out; the others are imported.
    const lines = ['{"type":"entity","name":"kept","entityType":"x","observations":["one"]}', '{"type":"entity","name":"a","name":"b","entityType":"x","observations":[]}'].join("\n");
    const imported = await server.request<{ imported: { entries: number }; errors: { line: number; detail: string }[] }>("/admin/import?project=", {
      as: server.owner,
      body: lines,
      headers: { "content-type": "application/x-ndjson" },
    });
    expect(imported.status, imported.text).toBe(200);
    expect(imported.body.imported.entries).toBe(1);
    expect(imported.body.errors).toEqual([{ line: 2, detail: "name: duplicate key" }]);
  });

  it("refuses a __proto__ key, which would set the input's prototype instead of a field", async ({ server, alice }) => {
    const response = await send(server, "/memory", alice, '{"content":"x","project":null,"__proto__":{"type":"directive"}}');
    expect(response.status, response.text).toBe(422);
    expect(response.body.errors).toEqual([{ path: "__proto__", message: "__proto__ is not accepted as a key" }]);
    const deep = await send(server, "/blueprints", alice, '{"name":"plan","title":"Plan","nodes":[{"id":"a","title":"A","output_schema":{"__proto__":{}}}]}');
    expect(deep.status, deep.text).toBe(422);
    expect(deep.body.errors).toEqual([{ path: "nodes.0.output_schema.__proto__", message: "__proto__ is not accepted as a key" }]);
  });
});

describe("the role is checked before the input", () => {
  const viewer = { agentId: "watcher", apiKey: "watcher-static-key-0123" };
  it.override("serverEnv", { AGENT_KEYS: `${viewer.agentId}:${viewer.apiKey}:viewer` });

  it("answers 403, not 415 or 422, on archivist- and owner-only routes and to a viewer's writes", async ({ server, alice }) => {
    const refused = [
      await send(server, "/captures/digest", alice, "{}"),
      await send(server, "/captures/digest", alice, "not json"),
      await send(server, "/captures/digest", alice, "{}", "text/plain"),
      await send(server, "/admin/import", alice, "{}", "application/json"),
      await send(server, "/logs", alice, '{"level":"nonsense"}'),
      await send(server, "/memory", viewer, '{"nope":1}'),
      await send(server, "/memory", viewer, "{}", "text/plain"),
      await rawRequest<ErrorBody>(`${server.url}/logs?limit=0`, { headers: keys(alice) }),
    ];
    for (const response of refused) {
      expect(response.status, response.text).toBe(403);
      expect(response.body.code).toBe("FORBIDDEN");
    }
    // Those who hold the role still have their input checked.
    expect((await send(server, "/captures/digest", server.archivist, "{}")).status).toBe(422);
    expect((await send(server, "/admin/import", server.owner, "{}", "application/json")).status).toBe(415);
    expect((await rawRequest(`${server.url}/logs?limit=0`, { headers: keys(server.owner) })).status).toBe(422);
    // A resource nobody may see is still 404, whoever asks.
    expect((await rawRequest(`${server.url}/memory/${"0".repeat(8)}-0000-4000-8000-${"0".repeat(12)}`, { headers: keys(viewer) })).status).toBe(404);
  });

  it("answers FORBIDDEN over MCP before the arguments are checked", async ({ server, alice }) => {
    const asAgent = await mcpClient(server, alice);
    const asViewer = await mcpClient(server, viewer);
    try {
      const digest = await callTool(asAgent, "capture_digest", { nonsense: true });
      expect(digest.isError).toBe(true);
      expect(digest.structured).toMatchObject({ code: "FORBIDDEN" });
      const write = await callTool(asViewer, "memory_write", { content: 42 });
      expect(write.structured).toMatchObject({ code: "FORBIDDEN" });
    } finally {
      await asAgent.close();
      await asViewer.close();
    }
  });
});

describe("blueprint names", () => {
  it("refuses __proto__, constructor and prototype as param or node names at save, with their paths", async ({ server, alice }) => {
    for (const name of ["__proto__", "constructor", "prototype"]) {
      const param = await server.request<ErrorBody>("/blueprints", { as: alice, body: { name: "plan", title: "Plan", params: [{ name, type: "string" }], nodes: [{ id: "a", title: "A" }] } });
      expect(param.status, param.text).toBe(422);
      expect(param.body.errors?.map((error) => error.path)).toEqual(["params.0.name"]);
      const node = await server.request<ErrorBody>("/blueprints", { as: alice, body: { name: "plan", title: "Plan", nodes: [{ id: name, title: "A" }] } });
      expect(node.status, node.text).toBe(422);
      expect(node.body.errors?.map((error) => error.path)).toEqual(["nodes.0.id"]);
    }
  });
});

describe("compile takes the client's word for its code", () => {
  it("stores the description and signature a client sends, and says so in the operation's description", async ({ server, alice }) => {
    const unit = {
      path: "src/db.ts",
      symbol: "reset",
      kind: "function",
      lang: "typescript",
      start_line: 1,
      end_line: 3,
      sha: createHash("sha256").update("reset").digest("hex"),
      signature: "function reset(): never",
      description: "Whatever the client says: nothing here was read from code.",
      deps: [],
    };
    const compiled = await server.request<{ memory_ids: string[] }>("/compile", { as: alice, body: { project: null, units: [unit] } });
    expect(compiled.status, compiled.text).toBe(200);
    const entry = await server.request<{ content: string }>(`/memory/${compiled.body.memory_ids[0]}`, { as: alice });
    expect(entry.body.content).toContain(unit.description);
    expect(entry.body.content).toContain(unit.signature);
    const openapi = await server.request<{ paths: Record<string, { post?: { description?: string } }> }>("/openapi.json");
    expect(openapi.body.paths["/compile"]?.post?.description).toMatch(/the client's claim/);
  });
});

describe("the owner's import", () => {
  const servers: TestServer[] = [];
  afterEach(async () => {
    for (const started of servers.splice(0)) await started.close();
  });

  it("refuses a compiled entry that comes without its anchor (as a format 1 file has it), and imports the rest", async ({ server, alice }) => {
    const unit = { path: "src/a.ts", symbol: "", kind: "module", lang: "typescript", start_line: 1, end_line: 9, sha: "a".repeat(64), description: "module a", deps: [] };
    const compiled = await server.request<{ memory_ids: string[] }>("/compile", { as: alice, body: { project: null, units: [unit] } });
    expect(compiled.status, compiled.text).toBe(200);
    const note = await server.request<{ id: string }>("/memory", { as: alice, body: { content: "module a is loaded first", project: null } });
    expect((await server.request("/graph/edge", { as: alice, body: { src: compiled.body.memory_ids[0], dst: note.body.id, rel: "grounds" } })).status).toBe(201);
    const exported = await server.request("/admin/export", { as: server.owner });
    // The anchor taken away: compile would neither rewrite such an entry nor mark what it grounds stale.
    const lines = exported.text
      .split("\n")
      .filter((line) => line !== "")
      .map((line) => (line.includes('"type":"compiled"') ? JSON.stringify({ ...(JSON.parse(line) as object), anchor: undefined }) : line));
    const compiledLine = lines.findIndex((line) => line.includes('"type":"compiled"')) + 1;
    const edgeLine = lines.findIndex((line) => line.includes('"rel":"grounds"')) + 1;
    expect(compiledLine).toBeGreaterThan(0);

    const target = await startTestServer();
    servers.push(target);
    const imported = await target.request<{ imported: { entries: number; edges: number }; errors: { line: number; detail: string }[] }>("/admin/import", {
      as: target.owner,
      body: lines.join("\n"),
      headers: { "content-type": "application/x-ndjson" },
    });
    expect(imported.status, imported.text).toBe(200);
    expect(imported.body.imported).toMatchObject({ entries: 1, edges: 0 });
    expect(imported.body.errors.map((error) => error.line)).toEqual([compiledLine, edgeLine]);
    expect(imported.body.errors[0]?.detail).toMatch(/^a compiled entry comes with its anchor/);
    expect(imported.body.errors[1]?.detail).toMatch(/^entry .* not found$/);
    expect((await target.request<unknown[]>("/memory?type=compiled&project=", { as: target.owner })).body).toEqual([]);
    expect((await target.request(`/memory/${note.body.id}`, { as: target.owner })).status).toBe(200);
  });
});

describe("lists take up to 500", () => {
  it("answers limit=500 and refuses limit=501 on captures, blueprints and handoffs", async ({ server, alice }) => {
    const routes: [string, Credentials][] = [
      ["/captures?mine=true&", alice],
      ["/captures?", server.archivist],
      ["/blueprints?", alice],
      ["/sessions/handoffs?", server.owner],
    ];
    for (const [path, as] of routes) {
      expect((await server.request(`${path}limit=500`, { as })).status, path).toBe(200);
      const over = await server.request<ErrorBody>(`${path}limit=501`, { as });
      expect(over.status, path).toBe(422);
      expect(over.body.errors?.map((error) => error.path)).toEqual(["limit"]);
    }
  });
});
