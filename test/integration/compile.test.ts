import { createHash } from "node:crypto";
import { describe, expect } from "vitest";
import type { CompileAnchor as Anchor, CompileResult as Result } from "../../src/wire/compile.js";
import type { EventRecord as Event } from "../../src/wire/events.js";
import type { MemoryEntry as Entry } from "../../src/wire/memory.js";
import { test } from "../helpers/fixtures.js";
import type { Credentials, ErrorBody, TestServer } from "../helpers/server.js";

// CONTRACT §18, the server's side: anchors and compiled entries from units, check, staleness
// carried over `grounds` and `depends_on` edges and cleared again, prune, members only, bounds.

const it = test
  .extend("alice", ({ server }) => server.agent("alice"))
  .extend("bob", ({ server }) => server.agent("bob"))
  .extend("carol", ({ server }) => server.agent("carol"));

const sha = (text: string): string => createHash("sha256").update(text).digest("hex");

/** A function unit of `path`; `version` stands for its text, so a new version is a new sha. */
function unit(path: string, symbol: string, version = "1", fields: Record<string, unknown> = {}): Record<string, unknown> {
  return {
    path,
    symbol,
    kind: symbol === "" ? "module" : "function",
    lang: "typescript",
    start_line: 1,
    end_line: 9,
    sha: sha(`${path}::${symbol}@${version}`),
    signature: `function ${symbol}(): void`,
    description: `function ${symbol}(): void\nDoes the ${symbol} part.`,
    deps: [],
    ...fields,
  };
}

/** The cursor that continues a list of anchors after `path` and `symbol`. */
const cursorAfter = (path: string, symbol: string): string => Buffer.from(JSON.stringify({ path, symbol })).toString("base64url");

const uses = (...names: string[]) => ({ deps: names.map((name) => ({ kind: "symbol", name })) });

async function compile(server: TestServer, as: Credentials, body: Record<string, unknown>, status = 200): Promise<Result> {
  const response = await server.request<Result>("/compile", { as, body: { project: "web", ...body } });
  expect(response.status, response.text).toBe(status);
  return response.body;
}

const entry = async (server: TestServer, as: Credentials, id: string) => (await server.request<Entry>(`/memory/${id}`, { as })).body;
const stale = async (server: TestServer, as: Credentials) => (await server.request<Entry[]>("/compile/stale?project=web", { as })).body;
const events = async (server: TestServer, as: Credentials, type: string) => (await server.request<Event[]>(`/events?since=seq:0&limit=500&type=${type}`, { as })).body;

/** `web` with alice and bob in it; carol stays outside. */
async function web(server: TestServer, alice: Credentials, bob: Credentials): Promise<void> {
  expect((await server.request("/projects", { as: alice, body: { name: "web" } })).status).toBe(201);
  expect((await server.request("/projects/web/join", { as: bob, method: "POST" })).status).toBe(200);
}

/** Bob's note about some code, grounded by that code's compiled entry. */
async function groundedNote(server: TestServer, alice: Credentials, bob: Credentials, compiledId: string, content: string): Promise<string> {
  const note = await server.request<Entry>("/memory", { as: bob, body: { content, project: "web" } });
  expect(note.status, note.text).toBe(201);
  const edge = await server.request("/graph/edge", { as: alice, body: { src: compiledId, dst: note.body.id, rel: "grounds" } });
  expect(edge.status, edge.text).toBe(201);
  return note.body.id;
}

describe("compiling units", () => {
  it("keeps one anchor and one compiled entry per piece of code, written again only when its sha changes", async ({ server, alice, bob }) => {
    await web(server, alice, bob);
    const units = [unit("src/a.ts", ""), unit("src/a.ts", "parse"), unit("src/a.ts", "render", "1", uses("parse"))];
    const first = await compile(server, alice, { commit: "c0ffee1", units });
    expect(first).toMatchObject({ project: "web", anchors: 3, created: 3, updated: 0, unchanged: 0, removed: 0, invalidated: [] });
    expect(first.memory_ids).toHaveLength(3);

    const parse = await entry(server, bob, first.memory_ids[1] as string);
    expect(parse).toMatchObject({ type: "compiled", agent_id: "alice", project: "web", scope: "project", confidence: 1, tags: ["compiled", "typescript"], version: 1, stale_since: null, stale_reason: null });
    expect(parse.source).toEqual({ kind: "compile", path: "src/a.ts", symbol: "parse", sha: units[1]?.sha, commit: "c0ffee1" });
    expect(parse.content.split("\n")).toEqual(["src/a.ts::parse (function, typescript)", "function parse(): void", "Does the parse part."]);
    expect((await server.request<Entry[]>("/memory?source_kind=compile&project=web", { as: bob })).body).toHaveLength(3);

    const again = await compile(server, alice, { units: units.map((item) => ({ ...item, start_line: 3, end_line: 11 })) });
    expect(again).toMatchObject({ anchors: 3, created: 0, updated: 0, unchanged: 3, memory_ids: first.memory_ids });
    expect((await entry(server, bob, first.memory_ids[1] as string)).version).toBe(1);
    const anchors = (await server.request<Anchor[]>("/compile/anchors?project=web&path=src/a.ts", { as: bob })).body;
    expect(anchors.map((anchor) => [anchor.symbol, anchor.start_line, anchor.commit])).toEqual([["", 3, "c0ffee1"], ["parse", 3, "c0ffee1"], ["render", 3, "c0ffee1"]]);

    const faster = unit("src/a.ts", "parse", "2", { description: "function parse(): void\nParses in one pass." });
    const changed = await compile(server, alice, { commit: "c0ffee2", units: [faster] });
    // render uses parse: its entry describes code that depends on what changed.
    expect(changed).toMatchObject({ created: 0, updated: 1, unchanged: 0, memory_ids: [first.memory_ids[1]], invalidated: [first.memory_ids[2]] });
    const rewritten = await entry(server, bob, first.memory_ids[1] as string);
    expect(rewritten).toMatchObject({ version: 2, content: "src/a.ts::parse (function, typescript)\nfunction parse(): void\nParses in one pass." });
    expect(rewritten.source).toMatchObject({ sha: sha("src/a.ts::parse@2"), commit: "c0ffee2" });
    const [moved] = (await server.request<Anchor[]>("/compile/anchors?project=web&path_prefix=src/a.ts&limit=1&cursor=" + cursorAfter("src/a.ts", ""), { as: bob })).body;
    expect(moved).toMatchObject({ symbol: "parse", sha: sha("src/a.ts::parse@2"), previous_sha: sha("src/a.ts::parse@1"), commit: "c0ffee2" });

    const completed = await events(server, bob, "compile.completed");
    expect(completed.map((event) => event.payload)).toEqual([
      { project: "web", created: 3, updated: 0, removed: 0, invalidated_count: 0, commit: "c0ffee1" },
      { project: "web", created: 0, updated: 0, removed: 0, invalidated_count: 0, commit: null },
      { project: "web", created: 0, updated: 1, removed: 0, invalidated_count: 1, commit: "c0ffee2" },
    ]);
    const updates = (await events(server, bob, "memory.updated")).filter((event) => event.payload.memory_id === first.memory_ids[1]);
    expect(updates.map((event) => event.payload)).toEqual([
      { memory_id: first.memory_ids[1], type: "compiled", project: "web", scope: "project", version: 2, source_kind: "compile", changed: ["content", "source"] },
    ]);
  });

  it("answers check with fresh, stale or unknown for each unit, in the order asked", async ({ server, alice, bob }) => {
    await web(server, alice, bob);
    const { memory_ids: ids } = await compile(server, alice, { units: [unit("src/b.ts", "one"), unit("src/b.ts", "two")] });
    const response = await server.request<unknown[]>("/compile/check", {
      as: bob,
      body: {
        project: "web",
        units: [
          { path: "src/b.ts", symbol: "two", sha: sha("src/b.ts::two@1").toUpperCase() },
          { path: "src/b.ts", symbol: "one", sha: sha("src/b.ts::one@2") },
          { path: "src/c.ts", symbol: "", sha: sha("new") },
        ],
      },
    });
    expect(response.status, response.text).toBe(200);
    expect(response.body).toEqual([
      { path: "src/b.ts", symbol: "two", status: "fresh", memory_id: ids[1] },
      { path: "src/b.ts", symbol: "one", status: "stale", memory_id: ids[0] },
      { path: "src/c.ts", symbol: "", status: "unknown", memory_id: null },
    ]);
  });
});

describe("staleness", () => {
  it("marks what changed code grounds, lists it oldest first with its reason, and announces it", async ({ server, alice, bob }) => {
    await web(server, alice, bob);
    const [parseId] = (await compile(server, alice, { units: [unit("src/a.ts", "parse")] })).memory_ids as [string];
    const noteId = await groundedNote(server, alice, bob, parseId, "parse() drops blank lines before tokenising");
    expect((await compile(server, alice, { units: [unit("src/a.ts", "parse")] })).invalidated).toEqual([]);

    const changed = await compile(server, alice, { units: [unit("src/a.ts", "parse", "2")] });
    expect(changed.invalidated).toEqual([noteId]);
    const reason = { path: "src/a.ts", symbol: "parse", old_sha: sha("src/a.ts::parse@1"), new_sha: sha("src/a.ts::parse@2") };
    const note = await entry(server, bob, noteId);
    expect(note).toMatchObject({ version: 1, stale_reason: reason });
    expect(note.stale_since).not.toBeNull();
    expect((await stale(server, alice)).map((row) => [row.id, row.stale_reason])).toEqual([[noteId, reason]]);
    const marks = (await events(server, bob, "memory.updated")).filter((event) => event.payload.memory_id === noteId);
    expect(marks.map((event) => event.payload)).toEqual([{ memory_id: noteId, type: "memory", project: "web", scope: "project", version: 1, reason: "stale" }]);
    expect(marks[0]?.agent_id).toBe("alice");
    expect((await server.request<{ counts: { stale_entries: number } }>("/pulse?project=web", { as: bob })).body.counts.stale_entries).toBe(1);
  });

  it("clears the mark when the entry's author updates it, and only then", async ({ server, alice, bob }) => {
    await web(server, alice, bob);
    const [parseId] = (await compile(server, alice, { units: [unit("src/a.ts", "parse")] })).memory_ids as [string];
    const edited = await groundedNote(server, alice, bob, parseId, "parse() returns a list of tokens");
    const confirmed = await groundedNote(server, alice, bob, parseId, "parse() never throws on empty input");
    await compile(server, alice, { units: [unit("src/a.ts", "parse", "2")] });
    expect((await stale(server, alice)).map((row) => row.id)).toEqual([edited, confirmed]);

    // The owner may change the entry, but only its author can say it holds for the new code.
    const byOwner = await server.request<Entry>(`/memory/${edited}`, { as: server.owner, method: "PATCH", body: { tags: ["parser"] } });
    expect(byOwner.body.stale_since).not.toBeNull();
    const byAuthor = await server.request<Entry>(`/memory/${edited}`, { as: bob, method: "PATCH", body: { content: "parse() returns an array of tokens" } });
    expect(byAuthor.body).toMatchObject({ version: 3, stale_since: null, stale_reason: null });
    // Re-saving what is there confirms it: the mark goes, the version stays.
    const same = await server.request<Entry>(`/memory/${confirmed}`, { as: bob, method: "PATCH", body: { content: "parse() never throws on empty input" } });
    expect(same.body).toMatchObject({ version: 1, stale_since: null });
    expect(await stale(server, alice)).toEqual([]);
    const fresh = (await events(server, bob, "memory.updated")).filter((event) => event.payload.memory_id === confirmed && event.payload.reason === "fresh");
    expect(fresh).toHaveLength(1);
  });

  it("moves the reason on while the code keeps changing, and clears it when the code returns to the old sha", async ({ server, alice, bob }) => {
    await web(server, alice, bob);
    const [parseId] = (await compile(server, alice, { units: [unit("src/a.ts", "parse")] })).memory_ids as [string];
    const noteId = await groundedNote(server, alice, bob, parseId, "parse() keeps comments");
    await compile(server, alice, { units: [unit("src/a.ts", "parse", "2")] });
    const since = (await entry(server, bob, noteId)).stale_since;
    expect((await compile(server, alice, { units: [unit("src/a.ts", "parse", "3")] })).invalidated).toEqual([noteId]);
    expect(await entry(server, bob, noteId)).toMatchObject({
      stale_since: since,
      stale_reason: { old_sha: sha("src/a.ts::parse@1"), new_sha: sha("src/a.ts::parse@3") },
    });
    const back = await compile(server, alice, { units: [unit("src/a.ts", "parse", "1")] });
    expect(back).toMatchObject({ updated: 1, invalidated: [] });
    expect(await entry(server, bob, noteId)).toMatchObject({ stale_since: null, stale_reason: null });
    const reasons = (await events(server, bob, "memory.updated")).filter((event) => event.payload.memory_id === noteId).map((event) => event.payload.reason);
    expect(reasons).toEqual(["stale", "stale", "fresh"]);
  });

  it("marks compiled entries that depend on changed code, one level further and no more", async ({ server, alice, bob }) => {
    await web(server, alice, bob);
    const units = [unit("src/a.ts", "tokenize"), unit("src/a.ts", "parse", "1", uses("tokenize")), unit("src/b.ts", "render", "1", uses("parse", "missing"))];
    const [tokenize, parse, render] = (await compile(server, alice, { units })).memory_ids as [string, string, string];
    const edges = (await server.request<{ src: string; dst: string }[]>("/graph?rel=depends_on&project=web", { as: bob })).body;
    // render names parse, defined in one file of the project only: the edge crosses files.
    expect(edges.map((edge) => [edge.src, edge.dst]).sort()).toEqual([[parse, tokenize], [render, parse]].sort());
    const noteId = await groundedNote(server, alice, bob, tokenize, "tokenize() splits on white space");

    const changed = await compile(server, alice, { units: [unit("src/a.ts", "tokenize", "2")] });
    expect([...changed.invalidated].sort()).toEqual([noteId, parse].sort());
    expect((await entry(server, bob, parse)).stale_reason).toMatchObject({ path: "src/a.ts", symbol: "tokenize" });
    expect((await entry(server, bob, render)).stale_since).toBeNull();

    // Code rewritten in the same compile as what it depends on describes itself afresh; what
    // depends on it in turn is marked.
    const both = await compile(server, alice, { units: [unit("src/a.ts", "tokenize", "3"), unit("src/a.ts", "parse", "2", uses("tokenize"))] });
    expect([...both.invalidated].sort()).toEqual([noteId, render].sort());
    expect(await entry(server, bob, parse)).toMatchObject({ version: 2, stale_since: null });
  });
});

describe("pruning", () => {
  it("removes the anchors under the prune paths that the units no longer name, with their entries", async ({ server, alice, bob }) => {
    await web(server, alice, bob);
    const first = await compile(server, alice, { units: [unit("src/x.ts", ""), unit("src/x.ts", "keep"), unit("src/x.ts", "gone"), unit("lib/y.ts", "helper"), unit("lib/z/w.ts", "deep")] });
    const [, keep, gone, helper, deep] = first.memory_ids as [string, string, string, string, string];
    const pruned = await compile(server, alice, { units: [unit("src/x.ts", ""), unit("src/x.ts", "keep")], prune_paths: ["src/x.ts"] });
    expect(pruned).toMatchObject({ anchors: 4, unchanged: 2, removed: 1 });
    expect((await server.request(`/memory/${gone}`, { as: bob })).status).toBe(404);
    expect((await entry(server, bob, keep)).id).toBe(keep);

    const directory = await compile(server, alice, { units: [], prune_paths: ["lib/"] });
    expect(directory).toMatchObject({ anchors: 2, removed: 2 });
    for (const id of [helper, deep]) expect((await server.request(`/memory/${id}`, { as: bob })).status).toBe(404);
    const anchors = (await server.request<Anchor[]>("/compile/anchors?project=web", { as: bob })).body;
    expect(anchors.map((anchor) => `${anchor.path}::${anchor.symbol}`)).toEqual(["src/x.ts::", "src/x.ts::keep"]);
    const deleted = (await events(server, bob, "memory.deleted")).map((event) => event.payload);
    expect(deleted).toEqual(expect.arrayContaining([expect.objectContaining({ memory_id: gone, reason: "pruned", source_kind: "compile" })]));
    expect(await server.request<unknown>("/compile/check", { as: bob, body: { project: "web", units: [{ path: "lib/y.ts", symbol: "helper", sha: sha("lib/y.ts::helper@1") }] } })).toMatchObject({
      body: [{ status: "unknown", memory_id: null }],
    });
  });
});

describe("who may compile and read compiled code", () => {
  it("is the project's members: a write by anyone else is refused, a read finds no project", async ({ server, alice, bob, carol }) => {
    await web(server, alice, bob);
    const { memory_ids: [id] } = await compile(server, alice, { units: [unit("src/a.ts", "parse")] });
    expect((await server.request<ErrorBody>("/compile", { as: carol, body: { project: "web", units: [unit("src/a.ts", "parse", "2")] } })).status).toBe(403);
    const check = { project: "web", units: [{ path: "src/a.ts", symbol: "parse", sha: sha("x") }] };
    expect((await server.request("/compile/check", { as: carol, body: check })).status).toBe(404);
    expect((await server.request("/compile/anchors?project=web", { as: carol })).status).toBe(404);
    expect((await server.request("/compile/stale?project=web", { as: carol })).status).toBe(404);
    expect((await server.request(`/memory/${id as string}`, { as: carol })).status).toBe(404);
    expect((await server.request<Anchor[]>("/compile/anchors?project=web", { as: server.owner })).body).toHaveLength(1);
    // Without a project, the caller's current one: alice's is web.
    expect((await server.request<Anchor[]>("/compile/anchors", { as: alice })).body).toHaveLength(1);
    // Global code is everyone's.
    expect((await compile(server, carol, { project: null, units: [unit("tools/t.ts", "")] })).project).toBeNull();
    expect((await server.request<Anchor[]>("/compile/anchors?project=", { as: bob })).body).toHaveLength(1);
  });
});

describe("compiled entries are compile's alone", () => {
  it("refuses to write, change, link, decay or merge them any other way", async ({ server, alice, bob }) => {
    await web(server, alice, bob);
    const [tokenize, parse] = (await compile(server, alice, { units: [unit("src/a.ts", "tokenize"), unit("src/a.ts", "parse")] })).memory_ids as [string, string];
    const note = await server.request<Entry>("/memory", { as: alice, body: { content: "parse() is recursive descent", project: "web" } });
    expect((await server.request("/memory", { as: alice, body: { content: "x", type: "compiled", project: "web" } })).status).toBe(422);
    expect((await server.request(`/memory/${note.body.id}`, { as: alice, method: "PATCH", body: { type: "compiled" } })).status).toBe(422);
    expect((await server.request(`/memory/${parse}`, { as: alice, method: "PATCH", body: { content: "edited by hand" } })).status).toBe(422);
    expect((await server.request(`/memory/${parse}`, { as: alice, method: "PATCH", body: {} })).status).toBe(200);

    const link = (body: Record<string, unknown>) => server.request<ErrorBody>("/graph/edge", { as: alice, body });
    expect((await link({ src: note.body.id, dst: parse, rel: "grounds" })).status).toBe(422);
    expect((await link({ src: tokenize, dst: parse, rel: "grounds" })).status).toBe(422);
    expect((await link({ src: parse, dst: tokenize, rel: "depends_on" })).status).toBe(422);
    expect((await link({ src: parse, dst: note.body.id, rel: "grounds" })).status).toBe(201);

    const archivist = server.archivist;
    expect((await server.request("/archivist/confidence", { as: archivist, body: { updates: [{ id: parse, confidence: 0.5 }] } })).status).toBe(422);
    const merge = await server.request("/archivist/merge", { as: archivist, body: { sources: [{ id: tokenize, version: 1 }, { id: parse, version: 1 }], content: "both" } });
    expect(merge.status).toBe(422);
    expect((await entry(server, bob, parse)).confidence).toBe(1);
  });
});

describe("bounds", () => {
  it("refuses oversized and malformed requests with 422, naming the field", async ({ server, alice, bob }) => {
    await web(server, alice, bob);
    const refused = async (path: string, body: Record<string, unknown>): Promise<string[]> => {
      const response = await server.request<ErrorBody>(path, { as: alice, body: { project: "web", ...body } });
      expect(response.status, response.text).toBe(422);
      return (response.body.errors ?? []).map((problem) => problem.path);
    };
    const many = Array.from({ length: 2001 }, (_, index) => unit("src/many.ts", `f${index}`));
    expect(await refused("/compile", { units: many })).toEqual(["units"]);
    const checks = Array.from({ length: 5001 }, (_, index) => ({ path: "src/many.ts", symbol: `f${index}`, sha: sha(String(index)) }));
    expect(await refused("/compile/check", { units: checks })).toEqual(["units"]);
    expect(await refused("/compile", { units: [unit("src/a.ts", "f", "1", { description: "é".repeat(2049) })] })).toEqual(["units.0.description"]);
    expect(await refused("/compile", { units: [unit("src/a.ts", "f", "1", { sha: "abc" })] })).toEqual(["units.0.sha"]);
    expect(await refused("/compile", { units: [unit("src/a.ts", "f", "1", { kind: "macro" })] })).toEqual(["units.0.kind"]);
    expect(await refused("/compile", { units: [unit("src/a.ts", "f", "1", { start_line: 5, end_line: 4 })] })).toEqual(["units.0.end_line"]);
    expect(await refused("/compile", { units: [unit("src/a.ts", "f"), unit("src/a.ts", "f", "2")] })).toEqual(["units.1"]);
    expect(await refused("/compile", { units: [], prune_paths: ["/"] })).toEqual(["prune_paths.0"]);
    expect((await server.request<Anchor[]>("/compile/anchors?project=web", { as: alice })).body).toEqual([]);
  });
});
