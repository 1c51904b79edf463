import { createHash } from "node:crypto";
import { describe, expect } from "vitest";
import type { CompileResult as Result } from "../../src/wire/compile.js";
import type { EventRecord as Event } from "../../src/wire/events.js";
import type { MemoryEntry as Entry } from "../../src/wire/memory.js";
import { test } from "../helpers/fixtures.js";
import type { Credentials, TestServer } from "../helpers/server.js";

// Issue 25, item 2: code may ground entries its compiler cannot see. Those entries are marked
// stale all the same (their readers want to know), but a compile tells its caller only of what
// the caller may see, and its event counts only what every reader of the event may see.

const it = test
  .extend("alice", ({ server }) => server.agent("alice"))
  .extend("carol", ({ server }) => server.agent("carol"));

const sha = (text: string): string => createHash("sha256").update(text).digest("hex");

const parseUnit = (version: string): Record<string, unknown> => ({
  path: "lib/parse.ts",
  symbol: "parse",
  kind: "function",
  lang: "typescript",
  start_line: 1,
  end_line: 9,
  sha: sha(`parse@${version}`),
  description: "function parse(): void",
  deps: [],
});

async function compileGlobal(server: TestServer, as: Credentials, version: string): Promise<Result> {
  const response = await server.request<Result>("/compile", { as, body: { project: null, units: [parseUnit(version)] } });
  expect(response.status, response.text).toBe(200);
  return response.body;
}

async function note(server: TestServer, as: Credentials, body: Record<string, unknown>): Promise<string> {
  const response = await server.request<{ id: string }>("/memory", { as, body });
  expect(response.status, response.text).toBe(201);
  return response.body.id;
}

async function ground(server: TestServer, as: Credentials, src: string, dst: string): Promise<void> {
  const response = await server.request("/graph/edge", { as, body: { src, dst, rel: "grounds" } });
  expect(response.status, response.text).toBe(201);
}

const entry = async (server: TestServer, as: Credentials, id: string) => (await server.request<Entry>(`/memory/${id}`, { as })).body;
const events = async (server: TestServer, as: Credentials, type: string) => (await server.request<Event[]>(`/events?since=seq:0&limit=500&type=${type}`, { as })).body;

/**
 * Global code `parse`, compiled by alice, grounding three entries: a global note everyone sees, a
 * note in project `q` (alice is in it, carol is not) and alice's private note.
 */
async function grounded(server: TestServer, alice: Credentials): Promise<{ compiled: string; global: string; inQ: string; mine: string }> {
  expect((await server.request("/projects", { as: alice, body: { name: "q" } })).status).toBe(201);
  const [compiled] = (await compileGlobal(server, alice, "1")).memory_ids;
  if (compiled === undefined) throw new Error("no compiled entry");
  const global = await note(server, alice, { content: "parse is the one place input is trusted", project: null });
  const inQ = await note(server, alice, { content: "q calls parse before every save", project: "q" });
  const mine = await note(server, alice, { content: "I suspect parse drops the last line", project: null, scope: "agent" });
  for (const dst of [global, inQ, mine]) await ground(server, alice, compiled, dst);
  return { compiled, global, inQ, mine };
}

describe("staleness across projects", () => {
  it("marks entries the compiler cannot see, but names and counts only those it may see", async ({ server, alice, carol }) => {
    const { global, inQ, mine } = await grounded(server, alice);

    const changed = await compileGlobal(server, carol, "2");
    expect(changed.invalidated).toEqual([global]);

    // The marks are made: q's member and the private note's author see them.
    const reason = { path: "lib/parse.ts", symbol: "parse", old_sha: sha("parse@1"), new_sha: sha("parse@2") };
    for (const id of [global, inQ, mine]) expect((await entry(server, alice, id)).stale_reason).toEqual(reason);
    expect((await server.request<Entry[]>("/compile/stale?project=q", { as: alice })).body.map((row) => row.id)).toEqual([inQ]);

    // The global event, which carol and everyone read, counts only the global note.
    const completed = await events(server, carol, "compile.completed");
    expect(completed.map((event) => event.payload.invalidated_count)).toEqual([0, 1]);
    expect((await events(server, alice, "compile.completed")).map((event) => event.payload.invalidated_count)).toEqual([0, 1]);

    // Carol hears of the global note's mark only; q's and alice's marks are theirs.
    const marks = async (as: Credentials) =>
      (await events(server, as, "memory.updated")).filter((event) => event.payload.reason === "stale").map((event) => event.payload.memory_id);
    expect(await marks(carol)).toEqual([global]);
    expect(new Set(await marks(alice))).toEqual(new Set([global, inQ, mine]));
  });

  it("names to each compiler what it may see: a member its project's entries, the owner every project's, nobody another's private entry", async ({ server, alice, carol }) => {
    const { global, inQ, mine } = await grounded(server, alice);

    const byAlice = await compileGlobal(server, alice, "2");
    expect(new Set(byAlice.invalidated)).toEqual(new Set([global, inQ, mine]));

    const byOwner = await compileGlobal(server, server.owner, "3");
    expect(new Set(byOwner.invalidated)).toEqual(new Set([global, inQ]));

    const byCarol = await compileGlobal(server, carol, "4");
    expect(byCarol.invalidated).toEqual([global]);

    // Back to the first code: every mark clears, and nobody is told of an entry it cannot see.
    const back = await compileGlobal(server, carol, "1");
    expect(back.invalidated).toEqual([]);
    for (const id of [global, inQ, mine]) expect((await entry(server, alice, id)).stale_since).toBeNull();
    const counts = (await events(server, carol, "compile.completed")).map((event) => event.payload.invalidated_count);
    expect(counts).toEqual([0, 1, 1, 1, 0]);
  });

  it("counts in a project's event its own entries and global ones, not another agent's private entry", async ({ server, alice, carol }) => {
    expect((await server.request("/projects", { as: alice, body: { name: "web" } })).status).toBe(201);
    expect((await server.request("/projects/web/join", { as: carol, method: "POST" })).status).toBe(200);
    const compileWeb = async (as: Credentials, version: string) => {
      const response = await server.request<Result>("/compile", { as, body: { project: "web", units: [parseUnit(version)] } });
      expect(response.status, response.text).toBe(200);
      return response.body;
    };
    const [compiled] = (await compileWeb(alice, "1")).memory_ids;
    if (compiled === undefined) throw new Error("no compiled entry");
    const shared = await note(server, alice, { content: "web parses requests with parse", project: "web" });
    const global = await note(server, alice, { content: "parse is used by web and others", project: null });
    const mine = await note(server, alice, { content: "my doubt about web's parse", project: "web", scope: "agent" });
    for (const dst of [shared, global, mine]) await ground(server, alice, compiled, dst);

    const changed = await compileWeb(carol, "2");
    expect(new Set(changed.invalidated)).toEqual(new Set([shared, global]));
    expect((await entry(server, alice, mine)).stale_since).not.toBeNull();
    const counts = (await events(server, carol, "compile.completed")).map((event) => event.payload.invalidated_count);
    expect(counts).toEqual([0, 2]);
  });
});
