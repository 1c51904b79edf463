import { createHash } from "node:crypto";
import { describe, expect } from "vitest";
import type { Pulse } from "../../src/wire/knowledge.js";
import type { MemoryEntry as Entry } from "../../src/wire/memory.js";
import { test } from "../helpers/fixtures.js";
import type { Credentials, TestServer } from "../helpers/server.js";

// Issue 26, "code where it belongs": compiled entries take no part in searches, lists, the pulse,
// the central entries or a session's delta unless the caller asks for code (type=compiled,
// source_kind=compile or include_code=true). Runs on whichever backend the suite runs on.

const it = test.extend("alice", ({ server }) => server.agent("alice")).extend("bob", ({ server }) => server.agent("bob"));

const sha = (text: string): string => createHash("sha256").update(text).digest("hex");

const unit = (symbol: string, description: string): Record<string, unknown> => ({
  path: "src/refunds.ts",
  symbol,
  kind: "function",
  lang: "typescript",
  start_line: 1,
  end_line: 9,
  sha: sha(symbol + description),
  signature: `function ${symbol}(): void`,
  description,
  deps: [],
});

const ids = (entries: { id: string }[]): string[] => entries.map((entry) => entry.id).sort();

async function get<T>(server: TestServer, as: Credentials, path: string): Promise<T> {
  const response = await server.request<T>(path, { as });
  expect(response.status, response.text).toBe(200);
  return response.body;
}

/** Project `shop` with a team note about refunds, a doc, and two compiled functions about refunds. */
async function shop(server: TestServer, alice: Credentials, bob: Credentials): Promise<{ notes: string[]; code: string[] }> {
  expect((await server.request("/projects", { as: alice, body: { name: "shop" } })).status).toBe(201);
  expect((await server.request("/projects/shop/join", { as: bob, method: "POST" })).status).toBe(200);
  const compiled = await server.request<{ memory_ids: string[] }>("/compile", {
    as: alice,
    body: {
      project: "shop",
      units: [unit("issueRefund", "Issues a refund to the card the order was paid with."), unit("refundWindow", "How many days after delivery a refund may be asked for.")],
    },
  });
  expect(compiled.status, compiled.text).toBe(200);
  const notes: string[] = [];
  for (const [content, type] of [
    ["We decided refunds over 500 euros need a second approval.", "memory"],
    ["Refunds: the support team issues them from the admin page.", "doc"],
  ] as const) {
    const written = await server.request<Entry>("/memory", { as: bob, body: { content, type, project: "shop" } });
    expect(written.status, written.text).toBe(201);
    notes.push(written.body.id);
  }
  const edge = await server.request("/graph/edge", { as: alice, body: { src: compiled.body.memory_ids[0], dst: notes[0], rel: "grounds" } });
  expect(edge.status, edge.text).toBe(201);
  return { notes: notes.sort(), code: [...compiled.body.memory_ids].sort() };
}

describe("compiled entries in reads", () => {
  it("are left out of a listing unless its type, provenance or include_code asks for them", async ({ server, alice, bob }) => {
    const { notes, code } = await shop(server, alice, bob);
    expect(ids(await get<Entry[]>(server, bob, "/memory?project=shop"))).toEqual(notes);
    expect(ids(await get<Entry[]>(server, bob, "/memory?project=shop&order=kind"))).toEqual(notes);
    expect(ids(await get<Entry[]>(server, bob, "/memory?project=shop&type=compiled"))).toEqual(code);
    expect(ids(await get<Entry[]>(server, bob, "/memory?project=shop&source_kind=compile"))).toEqual(code);
    expect(ids(await get<Entry[]>(server, bob, "/memory?project=shop&include_code=true"))).toEqual([...notes, ...code].sort());
    expect(ids(await get<Entry[]>(server, bob, "/memory?project=shop&include_code=false"))).toEqual(notes);
  });

  it("are left out of a search unless asked for, by both halves", async ({ server, alice, bob }) => {
    const { notes, code } = await shop(server, alice, bob);
    const search = (extra: string) => get<Entry[]>(server, bob, `/memory/search?q=${encodeURIComponent("refund")}&project=shop${extra}`);
    // Every entry holds the word: without code only the notes match, whichever half finds them.
    expect(ids(await search(""))).toEqual(notes);
    expect(ids(await search("&include_code=true"))).toEqual([...notes, ...code].sort());
    expect(ids(await search("&type=compiled"))).toEqual(code);
    expect(ids(await search("&source_kind=compile"))).toEqual(code);
    expect(ids(await search("&source_kind=capture"))).toEqual([]);
    // The vector half alone (a distance bound drops keyword-only hits) leaves code out too.
    const near = await get<(Entry & { match: string })[]>(server, bob, `/memory/search?q=${encodeURIComponent("refunds")}&project=shop&max_distance=2`);
    expect(near.filter((hit) => code.includes(hit.id))).toEqual([]);
    expect(near.length).toBeGreaterThan(0);
  });

  it("take no part in the pulse or the central entries unless asked for", async ({ server, alice, bob }) => {
    const { notes, code } = await shop(server, alice, bob);
    const pulse = await get<Pulse>(server, bob, "/pulse?project=shop");
    expect(pulse.counts.entries).toBe(2);
    expect(ids(pulse.graph.nodes)).toEqual(notes);
    const withCode = await get<Pulse>(server, bob, "/pulse?project=shop&include_code=true");
    expect(withCode.counts.entries).toBe(4);
    expect(ids(withCode.graph.nodes)).toEqual([...notes, ...code].sort());

    expect(ids(await get<Entry[]>(server, bob, "/memory/central?project=shop"))).toEqual(notes);
    expect(ids(await get<Entry[]>(server, bob, "/memory/central?project=shop&include_code=true"))).toEqual([...notes, ...code].sort());
    expect(ids(await get<Entry[]>(server, bob, "/memory/central?project=shop&type=compiled"))).toEqual(code);
  });

  it("are not news in a session's delta", async ({ server, alice, bob }) => {
    const { notes } = await shop(server, alice, bob);
    const pack = await get<{ memory_delta_since_last_seen: Entry[] }>(server, bob, "/sessions/handoff");
    expect(ids(pack.memory_delta_since_last_seen)).toEqual(notes);
  });
});
