import { randomUUID } from "node:crypto";
import { describe, expect } from "vitest";
import type { CentralEntry as Central, Pulse, RelatedEntry as Related } from "../../src/wire/knowledge.js";
import { test } from "../helpers/fixtures.js";
import type { Credentials, ErrorBody, TestServer } from "../helpers/server.js";

// CONTRACT §14: the knowledge graph read three ways — related, central, pulse.

const it = test
  .extend("alice", ({ server }) => server.agent("alice"))
  .extend("bob", ({ server }) => server.agent("bob"))
  .extend("carol", ({ server }) => server.agent("carol"));

async function write(server: TestServer, as: Credentials, content: string, extra: Record<string, unknown> = {}): Promise<string> {
  const response = await server.request<{ id: string }>("/memory", { as, body: { content, allow_duplicate: true, ...extra } });
  expect(response.status, response.text).toBe(201);
  return response.body.id;
}

async function link(server: TestServer, as: Credentials, src: string, rel: string, dst: string): Promise<void> {
  const response = await server.request("/graph/edge", { as, body: { src, dst, rel } });
  expect(response.status, response.text).toBe(201);
}

async function related(server: TestServer, as: Credentials, id: string, query = "include_similar=false"): Promise<Related[]> {
  const response = await server.request<Related[]>(`/memory/${id}/related?${query}`, { as });
  expect(response.status, response.text).toBe(200);
  return response.body;
}

async function central(server: TestServer, as: Credentials, query = ""): Promise<Central[]> {
  const response = await server.request<Central[]>(`/memory/central${query}`, { as });
  expect(response.status, response.text).toBe(200);
  return response.body;
}

/** `web` of alice and bob; carol stays outside. Alice's and bob's current project is web. */
async function web(server: TestServer, alice: Credentials, bob: Credentials): Promise<void> {
  expect((await server.request("/projects", { as: alice, body: { name: "web" } })).status).toBe(201);
  expect((await server.request("/projects/web/join", { as: bob, method: "POST" })).status).toBe(200);
}

const summary = (entries: Related[]) => entries.map(({ id, activation, hops, path }) => ({ id, activation, hops, path }));

describe("related", () => {
  it("spreads from the seed with the contract's weights, damping and degrees, and says a contradiction is one", async ({ server, alice, bob }) => {
    await web(server, alice, bob);
    const seed = await write(server, alice, "The checkout retries payment calls three times.");
    const a = await write(server, alice, "Payment calls are idempotent by request key.");
    const b = await write(server, alice, "The payment provider's sandbox is flaky on Mondays.");
    const d = await write(server, bob, "Payment calls are not idempotent for refunds.");
    await link(server, alice, seed, "supports", a);
    await link(server, alice, seed, "relates_to", b);
    await link(server, bob, a, "contradicts", d);
    // deg(seed) = 2: A gets 1·1.0·0.6/√2, B 1·0.6·0.6/√2; A (deg 2) passes 0.6/√2 · 0.7·0.6/√2 = 0.126 to D.
    expect(summary(await related(server, bob, seed))).toEqual([
      { id: a, activation: 0.424264, hops: 1, path: [{ id: a, rel: "supports", direction: "out" }] },
      { id: b, activation: 0.254558, hops: 1, path: [{ id: b, rel: "relates_to", direction: "out" }] },
      {
        id: d,
        activation: 0.126,
        hops: 2,
        path: [
          { id: a, rel: "supports", direction: "out" },
          { id: d, rel: "contradicts", direction: "out" },
        ],
      },
    ]);
    // One hop stops before D; min_activation above B's drops it; rels narrows the edges walked.
    expect((await related(server, bob, seed, "include_similar=false&hops=1")).map((entry) => entry.id)).toEqual([a, b]);
    expect((await related(server, bob, seed, "include_similar=false&min_activation=0.3")).map((entry) => entry.id)).toEqual([a]);
    const supportsOnly = await related(server, bob, seed, "include_similar=false&rels=supports,contradicts");
    // deg(seed) is now 1: A gets 0.6, and D 0.6 · 0.7·0.6/√2.
    expect(summary(supportsOnly).map(({ id, activation }) => ({ id, activation }))).toEqual([
      { id: a, activation: 0.6 },
      { id: d, activation: 0.178191 },
    ]);
    expect((await related(server, bob, seed, "include_similar=false&limit=1")).map((entry) => entry.id)).toEqual([a]);
    // The entries are whole entries.
    const [first] = await related(server, bob, seed);
    expect(first).toMatchObject({ id: a, content: "Payment calls are idempotent by request key.", agent_id: "alice", project: "web", via_similarity: false });
  });

  it("weighs supersedes towards the newer entry, and counts a merge parent as derived_from", async ({ server, alice }) => {
    const older = await write(server, alice, "Deploys happen on Fridays.", { project: null });
    const newer = await write(server, alice, "Deploys happen on Tuesdays, never on Fridays.", { project: null });
    await link(server, alice, newer, "supersedes", older);
    expect(summary(await related(server, alice, older))).toEqual([{ id: newer, activation: 0.48, hops: 1, path: [{ id: newer, rel: "supersedes", direction: "in" }] }]);
    expect(summary(await related(server, alice, newer))).toEqual([{ id: older, activation: 0.24, hops: 1, path: [{ id: older, rel: "supersedes", direction: "out" }] }]);
    const child = await write(server, alice, "Tuesday deploys start at 10:00 UTC.", { project: null, parents: [newer] });
    const fromChild = await related(server, alice, child, "include_similar=false&hops=1");
    expect(summary(fromChild)).toEqual([{ id: newer, activation: 0.54, hops: 1, path: [{ id: newer, rel: "derived_from", direction: "out" }] }]);
  });

  it("answers for an entry a private entry hangs off exactly as if that entry did not exist", async ({ server, alice, bob }) => {
    await web(server, alice, bob);
    const seed = await write(server, alice, "Search results are cached for five minutes.");
    const shared = await write(server, alice, "The cache is invalidated on every catalogue import.");
    const secret = await write(server, alice, "My hunch: the cache hides the stale price bug.", { scope: "agent" });
    const behind = await write(server, alice, "Stale prices were reported by two customers.");
    await link(server, alice, seed, "supports", shared);
    await link(server, alice, seed, "relates_to", secret);
    await link(server, alice, secret, "supports", behind);
    // Bob cannot see the private entry: it is neither returned nor walked, and does not count in deg(seed).
    expect(summary(await related(server, bob, seed))).toEqual([{ id: shared, activation: 0.6, hops: 1, path: [{ id: shared, rel: "supports", direction: "out" }] }]);
    // Its author walks through it.
    const mine = await related(server, alice, seed);
    expect(mine.map((entry) => entry.id).sort()).toEqual([shared, secret, behind].sort());
    expect(mine.find((entry) => entry.id === behind)?.path.map((step) => step.id)).toEqual([secret, behind]);
  });

  it("joins the seed's close neighbours by meaning to the first hop, unless asked not to", async ({ server, alice }) => {
    const seed = await write(server, alice, "Run the database migrations before deploying the API server.", { project: null });
    const twin = await write(server, alice, "Run the database migrations before deploying the API server!", { project: null });
    const found = await related(server, alice, seed, "");
    const hit = found.find((entry) => entry.id === twin);
    expect(hit).toMatchObject({ hops: 1, via_similarity: true, path: [{ id: twin, rel: "similar", direction: "out" }] });
    expect(hit?.activation).toBeGreaterThan(0);
    expect(await related(server, alice, seed, "include_similar=false")).toEqual([]);
  });

  it("is 404 for an entry the caller cannot see, and checks its parameters", async ({ server, alice, bob, carol }) => {
    await web(server, alice, bob);
    const seed = await write(server, alice, "Only web members know this.");
    const secret = await write(server, alice, "Alice's own note.", { scope: "agent" });
    for (const [who, id] of [
      [carol, seed],
      [bob, secret],
      [bob, randomUUID()],
    ] as const) {
      const response = await server.request<ErrorBody>(`/memory/${id}/related`, { as: who });
      expect(response.status).toBe(404);
    }
    for (const query of ["hops=5", "hops=0", "limit=51", "rels=likes", "min_activation=2"]) {
      expect((await server.request(`/memory/${seed}/related?${query}`, { as: alice })).status, query).toBe(422);
    }
  });
});

describe("central", () => {
  it("ranks a star by hand-computed PageRank, and favours the newer entry of a supersedes", async ({ server, alice }) => {
    const centre = await write(server, alice, "The order service owns the order state.", { project: null });
    const leaves: string[] = [];
    for (const fact of ["Refunds read order state from the order service.", "Invoices are built from order state.", "Shipping waits for the order state to be paid."]) {
      const leaf = await write(server, alice, fact, { project: null });
      await link(server, alice, leaf, "supports", centre);
      leaves.push(leaf);
    }
    // N = 4, d = 0.85, the centre dangling: l = 0.0375 + 0.2125·c, c = 0.0375 + 2.55·l + 0.2125·c.
    const c = 0.133125 / 0.245625;
    const l = 0.0375 + 0.2125 * c;
    const ranked = await central(server, alice);
    expect(ranked.map((entry) => entry.id)).toEqual([centre, ...leaves.slice().reverse()]);
    expect(ranked[0]?.score).toBeCloseTo(c, 5);
    for (const entry of ranked.slice(1)) expect(entry.score).toBeCloseTo(l, 5);
    expect(ranked.map((entry) => entry.rank)).toEqual([1, 2, 3, 4]);
    expect(await central(server, alice, "?limit=2")).toEqual(ranked.slice(0, 2));

    const older = await write(server, alice, "Orders are kept for one year.", { project: null, type: "doc" });
    const newer = await write(server, alice, "Orders are kept for seven years (tax law).", { project: null, type: "doc" });
    await link(server, alice, newer, "supersedes", older);
    const docs = await central(server, alice, "?type=doc");
    expect(docs.map((entry) => entry.id)).toEqual([newer, older]);
    expect(docs[0]?.score).toBeGreaterThan(docs[1]?.score as number);
  });

  it("is not moved by private entries, and is computed again once the selection changes", async ({ server, alice, bob }) => {
    await web(server, alice, bob);
    const hub = await write(server, alice, "Feature flags live in the flags table.");
    const other = await write(server, alice, "Flags are cached per request.");
    await link(server, alice, other, "supports", hub);
    const before = await central(server, bob, "?project=web");
    expect(before.map((entry) => entry.id)).toEqual([hub, other]);
    // Bob's private entries vouching for `other` change nobody's rank, not even for bob.
    for (const note of ["My note on flags caching.", "Another private note on caching."]) {
      const mine = await write(server, bob, note, { scope: "agent" });
      await link(server, bob, mine, "supports", other);
    }
    expect(await central(server, bob, "?project=web")).toEqual(before);
    expect(await central(server, alice, "?project=web")).toEqual(before);
    // Two shared entries supporting `other` count at once: the cached ranks are not served.
    const added: string[] = [];
    for (const fact of ["The flags cache is cleared on deploy.", "Per-request flag caching avoids flapping."]) {
      added.push(await write(server, bob, fact));
      await link(server, bob, added.at(-1) as string, "supports", other);
    }
    const after = await central(server, bob, "?project=web");
    expect(after.slice(0, 2).map((entry) => entry.id)).toEqual([hub, other]);
    expect(after.map((entry) => entry.id).slice(2).sort()).toEqual(added.sort());
    // `other` now passes on what two entries give it: its part of the hub's rank grows.
    const score = (ranks: Central[], id: string): number => ranks.find((entry) => entry.id === id)?.score as number;
    expect(score(after, other) / score(after, hub)).toBeGreaterThan(score(before, other) / score(before, hub));
  });

  it("reads the caller's projects and global by default, and is 404 for a project the caller is not in", async ({ server, alice, bob, carol }) => {
    await web(server, alice, bob);
    const inWeb = await write(server, alice, "Web uses server-side rendering.");
    const global = await write(server, carol, "Every service logs in JSON.", { project: null });
    expect((await central(server, bob)).map((entry) => entry.id).sort()).toEqual([inWeb, global].sort());
    expect((await central(server, carol)).map((entry) => entry.id)).toEqual([global]);
    expect((await central(server, server.owner)).map((entry) => entry.id).sort()).toEqual([inWeb, global].sort());
    expect((await server.request(`/memory/central?project=web`, { as: carol })).status).toBe(404);
    expect((await server.request(`/memory/central?project=nowhere`, { as: carol })).status).toBe(404);
    expect((await server.request(`/memory/central?limit=101`, { as: carol })).status).toBe(422);
  });
});

/** Entries and edges of chosen ids through the owner's import: hundreds at once. */
async function importGraph(server: TestServer, project: string, entries: string[], edges: [string, string, string][]): Promise<void> {
  const at = new Date().toISOString();
  const lines = [
    ...entries.map((id, index) =>
      JSON.stringify({
        kind: "entry",
        id,
        type: "memory",
        agent_id: "alice",
        project,
        scope: "project",
        content: `Imported fact number ${index} about the ${project} service.`,
        confidence: 1,
        parents: [],
        tags: [],
        headline: null,
        created_at: at,
        updated_at: at,
        version: 1,
        expires_at: null,
        read_count: 0,
        distinct_readers: 0,
        reinforcement_count: 0,
        last_reinforced_at: null,
        superseded_by: null,
        embedding_model: null,
      }),
    ),
    ...edges.map(([src, rel, dst]) => JSON.stringify({ kind: "edge", id: randomUUID(), src, dst, rel, note: null, project, agent_id: "alice", created_at: at, updated_at: at })),
  ];
  const response = await server.request<{ errors: unknown[] }>("/admin/import", { as: server.owner, body: lines.join("\n"), headers: { "content-type": "application/x-ndjson" } });
  expect(response.body.errors).toEqual([]);
}

describe("pulse", () => {
  it("draws a project's graph with its central, hot and conflicting entries and who works on what, never a private entry", async ({ server, alice, bob }) => {
    await web(server, alice, bob);
    const hub = await write(server, alice, "# Checkout\nThe   checkout\n\nflow has three steps.", { tags: ["checkout"] });
    const step = await write(server, alice, "Step two validates the basket.", { tags: ["checkout", "basket"] });
    const wrong = await write(server, bob, "Step two is skipped for gift cards.", { tags: ["checkout"] });
    await link(server, alice, step, "supports", hub);
    await link(server, bob, wrong, "contradicts", step);
    const secret = await write(server, alice, "Private: checkout numbers look off.", { scope: "agent", tags: ["checkout"] });
    await link(server, alice, secret, "supports", hub);
    for (const reader of [bob, alice]) expect((await server.request(`/memory/${step}`, { as: reader })).status).toBe(200);
    const task = await server.request<{ id: string }>("/tasks", { as: alice, body: { title: "Fix gift cards", project: "web" } });
    expect(task.status).toBe(201);
    // Online, but not of the project: not counted among its agents online.
    const carol = await server.agent("carol");
    expect((await server.request("/agents/me", { as: carol })).status).toBe(200);

    const response = await server.request<Pulse>("/pulse", { as: alice });
    expect(response.status, response.text).toBe(200);
    const pulse = response.body;
    expect(pulse).toMatchObject({ project: "web", scope: "project", counts: { entries: 3, edges: 2, open_tasks: 1, claimed_tasks: 0, stale_entries: 0, agents_online: 2 } });
    expect(pulse.graph.nodes.map((node) => node.id).sort()).toEqual([hub, step, wrong].sort());
    expect(pulse.graph.nodes.find((node) => node.id === hub)?.label).toBe("# Checkout The checkout flow has three steps.");
    expect(pulse.graph.edges).toEqual(expect.arrayContaining([{ src: step, dst: hub, rel: "supports" }, { src: wrong, dst: step, rel: "contradicts" }]));
    expect(pulse.graph.truncated).toBe(false);
    expect(pulse.central[0]).toMatchObject({ id: hub, rank: 1 });
    expect(pulse.hot).toEqual([{ id: step, label: "Step two validates the basket.", reads: 1, readers: 1 }]);
    expect(pulse.conflicts).toEqual([expect.objectContaining({ src: wrong, dst: step, src_label: "Step two is skipped for gift cards.", dst_label: "Step two validates the basket." })]);
    const text = JSON.stringify(pulse);
    expect(text).not.toContain(secret);
    expect(text).not.toContain("numbers look off");
    expect(pulse.activity.find((row) => row.agent_id === "alice")).toMatchObject({ writes_24h: 2 });
    expect(pulse.activity.find((row) => row.agent_id === "bob")).toMatchObject({ writes_24h: 1, reads_24h: 1 });
    expect(pulse.affinities).toEqual(expect.arrayContaining([{ agent_id: "bob", tag: "checkout", weight: expect.any(Number) as number }]));
    for (const affinity of pulse.affinities) expect(affinity.weight).toBeGreaterThanOrEqual(0.05);

    // Cached: the same answer for 30 s, whoever asks.
    await write(server, bob, "A new fact nobody linked yet.");
    expect((await server.request<Pulse>("/pulse?project=web", { as: bob })).body).toEqual(pulse);
  });

  it("caps the graph at 300 nodes and 600 edges, both ends among the nodes", async ({ server, alice, bob }) => {
    await web(server, alice, bob);
    const ids = Array.from({ length: 320 }, () => randomUUID());
    const edges: [string, string, string][] = [];
    for (let index = 0; index < ids.length; index++) {
      for (const step of [1, 2, 3]) edges.push([ids[index] as string, "supports", ids[(index + step) % ids.length] as string]);
    }
    await importGraph(server, "web", ids, edges);
    const pulse = (await server.request<Pulse>("/pulse?project=web", { as: bob })).body;
    expect(pulse.counts).toMatchObject({ entries: 320, edges: 960 });
    expect(pulse.graph.nodes).toHaveLength(300);
    expect(pulse.graph.edges).toHaveLength(600);
    expect(pulse.graph.truncated).toBe(true);
    const nodes = new Set(pulse.graph.nodes.map((node) => node.id));
    for (const edge of pulse.graph.edges) expect(nodes.has(edge.src) && nodes.has(edge.dst)).toBe(true);
    const scores = pulse.graph.nodes.map((node) => node.score);
    expect(scores).toEqual([...scores].sort((x, y) => y - x));
    expect(pulse.central).toHaveLength(8);
  });

  it("is 404 for a project the caller is not in; the owner without a project sees everything", async ({ server, alice, bob, carol }) => {
    await web(server, alice, bob);
    await write(server, alice, "A web fact.");
    await write(server, carol, "A global fact.", { project: null });
    expect((await server.request("/pulse?project=web", { as: carol })).status).toBe(404);
    expect((await server.request("/pulse?project=nowhere", { as: carol })).status).toBe(404);
    // Creating a project makes it the owner's current project; naming none still means everything.
    expect((await server.request("/projects", { as: server.owner, body: { name: "ops" } })).status).toBe(201);
    const everything = (await server.request<Pulse>("/pulse", { as: server.owner })).body;
    expect(everything).toMatchObject({ project: null, scope: "all", counts: { entries: 2 } });
    const global = (await server.request<Pulse>("/pulse", { as: carol })).body;
    expect(global).toMatchObject({ project: null, scope: "global", counts: { entries: 1 } });
  });
});
