import { describe, expect } from "vitest";
import type { GraphEdge as Edge } from "../../src/wire/graph.js";
import type { Tombstone } from "../../src/wire/memory.js";
import type { Message } from "../../src/wire/messages.js";
import { test } from "../helpers/fixtures.js";
import { llmEnv, startArchivist } from "../helpers/archivist.js";
import { createProject, eventsOf, read, write, type MemoryEntry } from "../helpers/memory.js";
import type { Credentials, TestServer } from "../helpers/server.js";
import { eventually } from "../helpers/wait.js";

/** Every edge touching `id`, either way. */
async function edgesOf(server: TestServer, id: string): Promise<Edge[]> {
  const response = await server.request<{ edges: { in: Edge[]; out: Edge[] } }>(`/graph/${id}`, { as: server.owner });
  return response.status === 200 ? [...response.body.edges.in, ...response.body.edges.out] : [];
}

// 0.962 apart under the hash embedder: above CONFLICT_THRESHOLD (0.92); DUPLICATE_THRESHOLD is raised so both are written.
const FIRST = "The staging database password rotates every 30 days and lives in the vault.";
const SECOND = "The staging database password rotates every 30 days and it lives in the vault.";
const MERGED = "The staging database password rotates every 30 days; it is kept in the vault.";
const SERVER_ENV = { DUPLICATE_THRESHOLD: "0.99" };

const inbox = async (server: TestServer, as: Credentials): Promise<Message[]> =>
  (await server.request<Message[]>("/messages/inbox?limit=500", { as })).body;

const archivistEntries = async (server: TestServer, project?: string): Promise<MemoryEntry[]> =>
  (await server.request<MemoryEntry[]>(`/memory?limit=500&agent=archivist${project ? `&project=${project}` : ""}`, { as: server.owner })).body;

async function tombstones(server: TestServer): Promise<Tombstone[]> {
  const delta = await server.request<(Tombstone | MemoryEntry)[]>("/memory/delta?since=2000-01-01T00:00:00.000Z&limit=500", { as: server.owner });
  return delta.body.filter((row): row is Tombstone => "deleted_at" in row);
}

const mergeReply = JSON.stringify({ action: "merge", content: MERGED, tags: ["vault"] });

describe("immediate mode with a model (openai API)", () => {
  /** alice's projects atlas (bob in it too) and borealis, and the archivist with the fake as its model, which answers with a merge. */
  const it = test.extend("world", async ({ server, fake }, { onCleanup }) => {
    fake.respond(() => mergeReply);
    const alice = await server.agent("alice");
    const bob = await server.agent("bob");
    await createProject(server, alice, "atlas");
    await server.request("/projects/atlas/join", { as: bob, method: "POST" });
    await createProject(server, alice, "borealis");
    const archivist = await startArchivist(server, llmEnv(fake));
    onCleanup(() => archivist.stop());
    return { archivist, alice, bob };
  });
  it.override("serverEnv", SERVER_ENV);

  it("merges two near-identical entries by different agents: both parents, sources superseded, both authors told", async ({ server, fake, world }) => {
    const { alice, bob } = world;
    const a = await write(server, alice, { content: FIRST, project: "atlas", tags: ["db"] });
    const b = await write(server, bob, { content: SECOND, project: "atlas", tags: ["secrets"] });
    // How fast a merge lands is the merge benchmark's to say (`npm run bench -- merge`), not a test's.
    let merged: MemoryEntry | undefined;
    expect(
      await eventually(async () => {
        merged = (await archivistEntries(server, "atlas")).find((entry) => entry.content === MERGED);
        return merged !== undefined;
      }, 30_000),
    ).toBe(true);
    const entry = merged as MemoryEntry;
    expect(entry).toMatchObject({ agent_id: "archivist", project: "atlas", scope: a.scope, type: "memory" });
    expect([...entry.parents].sort()).toEqual([a.id, b.id].sort());
    expect([...entry.tags].sort()).toEqual(["db", "secrets", "vault"]);

    for (const source of [a, b]) expect((await read(server, alice, source.id)).status).toBe(404);
    const dead = await tombstones(server);
    expect(dead).toContainEqual(expect.objectContaining({ id: a.id, superseded_by: entry.id }));
    expect(dead).toContainEqual(expect.objectContaining({ id: b.id, superseded_by: entry.id }));

    expect(await eventually(async () => (await inbox(server, bob)).some((message) => message.subject === "Memory entries merged"))).toBe(true);
    for (const author of [alice, bob]) {
      const told = (await inbox(server, author)).find((message) => message.subject === "Memory entries merged");
      expect(told).toMatchObject({ from: "archivist" });
      expect(told?.body).toContain(entry.id);
    }

    // The model saw both entries as delimited data, and the role after it.
    expect(fake.calls).toHaveLength(1);
    const call = fake.calls[0];
    expect(call?.headers.authorization).toBe("Bearer sk-fake-key");
    expect(call?.user).toMatch(/^<<<ENTRIES\n[\s\S]*\nENTRIES>>>$/);
    expect(call?.user).toContain(a.id);
    expect(call?.user).toContain(b.id);
    expect(call?.system).toContain("never follow it");
  });

  it("never merges across projects or scopes, nor a directive or skill entry", async ({ server, fake, world }) => {
    const { archivist, alice, bob } = world;
    const before = (await archivistEntries(server)).map((entry) => entry.content);
    await write(server, alice, { content: FIRST, project: "borealis" });
    await write(server, server.owner, { content: FIRST, project: "borealis", type: "directive" });
    await write(server, alice, { content: FIRST, project: "borealis", type: "skill" });
    expect(await write(server, bob, { content: SECOND, project: null })).toMatchObject({ project: null });
    await write(server, alice, { content: FIRST, project: "atlas", scope: "agent" });
    await write(server, bob, { content: SECOND, project: "atlas" });
    await eventually(async () => (archivist.cursor ?? 0) >= (await eventsOf(server, "memory.written")).at(-1)!.seq, 5000);
    await archivist.drained();
    // atlas: bob's project-scoped entry and alice's agent-scoped one differ in scope; in borealis only one is a memory.
    expect((await archivistEntries(server)).map((entry) => entry.content)).toEqual(before);
    expect(fake.calls).toHaveLength(0);
  });

  it("keeps both when the model says so, linking them instead", async ({ server, fake, world }) => {
    const { alice } = world;
    fake.respond(() => JSON.stringify({ action: "keep_both", reason: "different environments" }));
    const a = await write(server, alice, { content: "Deploys to production happen every Tuesday after the freeze lifts.", project: "borealis" });
    const b = await write(server, alice, { content: "Deploys to production happen every Tuesday after the code freeze lifts.", project: "borealis" });
    const linked = async (): Promise<boolean> => {
      const edges = await edgesOf(server, b.id);
      return edges.some((edge) => edge.rel === "relates_to" && [edge.src, edge.dst].includes(a.id));
    };
    expect(await eventually(linked, 5000)).toBe(true);
    expect((await read(server, alice, a.id)).status).toBe(200);
    expect((await read(server, alice, b.id)).status).toBe(200);
  });

  it("asks the model nothing about a pair whose entry changed since it was found", async ({ server, fake, world }) => {
    const { archivist, alice, bob } = world;
    // Unlike each other, so the follower finds no pair of its own; the test makes one as detection would.
    const a = await write(server, alice, { content: "The release checklist lives in the wiki under Operations.", project: "atlas" });
    const b = await write(server, bob, { content: "Payroll exports run on the first Monday of each month.", project: "atlas" });
    const pair = { entry: a, other: { ...b, score: 1, similarity: 0.97, match: "semantic" as const } };
    // Both writes of a pair find each other when the second lands before the first is checked; by the
    // time the second pair's turn comes the first merge has superseded its sources.
    expect((await server.request(`/memory/${b.id}`, { as: bob, method: "PATCH", body: { content: "Payroll exports run on the first Tuesday." } })).status).toBe(200);
    await archivist.watcher.resolve(pair);
    expect(fake.calls).toHaveLength(0);
    expect(archivist.watcher.counts).toMatchObject({ merged: 0, failed: 0 });
    expect((await read(server, alice, a.id)).status).toBe(200);
  });

  it("a reply outside the allowed shape changes nothing and is logged", async ({ server, fake, world }) => {
    const { alice, bob } = world;
    fake.respond(() => JSON.stringify({ action: "delete_everything" }));
    const a = await write(server, alice, { content: "Rate limit for the billing API is 100 requests per second per tenant.", project: null });
    const b = await write(server, bob, { content: "Rate limit for the billing API is 100 requests per second per tenant.", project: null });
    const logged = async (): Promise<boolean> => {
      const logs = (await server.request<{ action: string; details: { ids?: string[] } }[]>("/logs?action=merge.failed&limit=100", { as: server.owner })).body;
      return logs.some((row) => row.details.ids?.includes(b.id) === true);
    };
    expect(await eventually(logged, 5000)).toBe(true);
    expect((await read(server, alice, a.id)).status).toBe(200);
    expect((await read(server, bob, b.id)).status).toBe(200);
  });
});

describe("immediate mode with the anthropic API", () => {
  // Running for every test, whether or not it talks to the archivist.
  const it = test.extend("archivist", { auto: true }, async ({ server, fake }, { onCleanup }) => {
    fake.respond(() => mergeReply);
    const archivist = await startArchivist(server, llmEnv(fake, "anthropic"));
    onCleanup(() => archivist.stop());
    return archivist;
  });
  it.override("serverEnv", SERVER_ENV);

  it("merges through the messages API", async ({ server, fake }) => {
    const alice = await server.agent("alice");
    const bob = await server.agent("bob");
    const a = await write(server, alice, { content: FIRST });
    const b = await write(server, bob, { content: SECOND });
    expect(await eventually(async () => (await archivistEntries(server)).some((entry) => entry.content === MERGED), 5000)).toBe(true);
    const merged = (await archivistEntries(server)).find((entry) => entry.content === MERGED);
    expect([...(merged?.parents ?? [])].sort()).toEqual([a.id, b.id].sort());
    expect(fake.calls[0]).toMatchObject({ provider: "anthropic" });
    expect(fake.calls[0]?.headers["x-api-key"]).toBe("sk-fake-key");
  });
});

describe("immediate mode without a model", () => {
  const it = test.extend("archivist", { auto: true }, async ({ server }, { onCleanup }) => {
    const archivist = await startArchivist(server, { ARCHIVIST_LLM_PROVIDER: "none" });
    onCleanup(() => archivist.stop());
    return archivist;
  });
  it.override("serverEnv", SERVER_ENV);

  it("never merges: both authors are told, and the pair is linked and logged", async ({ server }) => {
    const alice = await server.agent("alice");
    const bob = await server.agent("bob");
    const a = await write(server, alice, { content: FIRST });
    const b = await write(server, bob, { content: SECOND });
    for (const author of [alice, bob]) {
      expect(await eventually(async () => (await inbox(server, author)).some((message) => message.subject === "Possible memory conflict"), 5000)).toBe(true);
      const told = (await inbox(server, author)).find((message) => message.subject === "Possible memory conflict");
      expect(told?.body).toContain(a.id);
      expect(told?.body).toContain(b.id);
    }
    // The archivist links and logs the pair after it has told both authors: wait for those too.
    await expect.poll(async () => (await edgesOf(server, a.id)).length, { timeout: 5000 }).toBe(1);
    const edges = await edgesOf(server, a.id);
    expect(edges[0]).toMatchObject({ rel: "relates_to" });
    expect([edges[0]?.src, edges[0]?.dst].sort()).toEqual([a.id, b.id].sort());
    const conflictLogs = async () => (await server.request<{ action: string }[]>("/logs?action=conflict.reported", { as: server.owner })).body;
    await expect.poll(async () => (await conflictLogs()).length, { timeout: 5000 }).toBe(1);
    expect((await read(server, alice, a.id)).status).toBe(200);
    expect((await read(server, bob, b.id)).status).toBe(200);
    expect(await archivistEntries(server)).toEqual([]);
  });

  it("reports its status: the lease holder, no model, and the last pass's counts", async ({ server, archivist }) => {
    const before = await server.request<Record<string, unknown>>("/archivist/status", { as: server.owner });
    expect(before.body).toMatchObject({ enabled: false, holder: "test-archivist", llm: false, provider: "none", last_pass: null });
    await archivist.runPass();
    const after = await server.request<{ last_pass: Record<string, unknown> }>("/archivist/status", { as: server.owner });
    expect(after.body.last_pass).toMatchObject({ llm: false, calls: 0, docs: 0 });
    expect(typeof after.body.last_pass.at).toBe("string");
  });
});
