import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { withDatabase } from "../helpers/database.js";
import { randomUUID } from "node:crypto";
import { createProject, entries, instanceId, links, merkleRoot, mintToken, quietLink, syncNow, write, type Entry } from "../helpers/mesh-sync.js";
import { startTestServer, tempDir, type Credentials, type TestServer } from "../helpers/server.js";

// CONTRACT §16 "Single-writer replication", "What replicates", "Identity", "Sync": two real
// servers, the second pulling the first's shared memory, on both backends.

// Each test that compares summaries has a project of its own: the tests run in any order.
const LINKED = ["shared", "edits", "cleared", "repair", "hidden", "moved", "mended"];

let alpha: TestServer;
let beta: TestServer;
let alice: Credentials;
let linkId: string;
let alphaId: string;



beforeAll(async () => {
  alpha = await startTestServer({ INSTANCE_NAME: "alpha" });
  beta = await startTestServer({ INSTANCE_NAME: "beta", MESH_SYNC_TICK_SECONDS: "1" });
  alice = await alpha.agent("alice");
  for (const server of [alpha, beta]) for (const project of [...LINKED, "elsewhere"]) await createProject(server, project);
  for (const project of [...LINKED, "elsewhere"]) await alpha.request(`/projects/${project}/join`, { as: alice, method: "POST" });
  alphaId = await instanceId(alpha);
  linkId = (await quietLink(beta, alpha, LINKED)).id;
});

afterAll(async () => {
  await alpha?.close();
  await beta?.close();
});

const byId = (list: Entry[], id: string): Entry | undefined => list.find((entry) => entry.id === id);

describe("a sync", () => {
  it("copies memory, doc and skill entries of linked projects with their ids, versions, origin and identity", async () => {
    const memory = await write(alpha, alice, { content: "The build cache lives in /var/cache/build", project: "shared", tags: ["build"], confidence: 0.95 });
    const doc = await write(alpha, alice, { type: "doc", content: "Release checklist: tag, build, publish", project: "shared" });
    const skill = await write(alpha, alice, { type: "skill", content: "To bisect a flaky test, run it 50 times per commit", project: "shared" });
    const result = await syncNow(beta, linkId);
    expect(result.applied).toBeGreaterThanOrEqual(3);
    const copies = await entries(beta, "shared");
    for (const original of [memory, doc, skill]) {
      const copy = byId(copies, original.id);
      expect(copy, original.type).toMatchObject({ id: original.id, type: original.type, version: original.version, content: original.content, project: "shared" });
      expect(copy?.agent_id).toBe("alice@alpha");
      expect(copy?.source).toEqual({ kind: "mesh", origin: alphaId, origin_name: "alpha", link_id: linkId });
    }
    // The link caps confidence (0.8 by default).
    expect(byId(copies, memory.id)?.confidence).toBe(0.8);
    expect(byId(copies, memory.id)?.tags).toEqual(["build"]);
  });

  it("never copies directives, private entries, other projects or compiled code", async () => {
    const directive = await write(alpha, alpha.owner, { type: "directive", content: "Never push on Fridays", project: "shared" });
    const secret = await write(alpha, alice, { content: "My own scratch note", project: "shared", scope: "agent" });
    const other = await write(alpha, alice, { content: "Not linked at all", project: "elsewhere" });
    const global = await write(alpha, alice, { content: "A global note", project: null });
    await syncNow(beta, linkId);
    const ids = new Set((await beta.request<Entry[]>("/memory?limit=500&include_code=true", { as: beta.owner })).body.map((entry) => entry.id));
    for (const entry of [directive, secret, other, global]) expect(ids.has(entry.id), entry.content).toBe(false);
  });

  it("propagates edits and deletions, and a copy refuses both here", async () => {
    const original = await write(alpha, alice, { content: "Deploys go through the staging cluster", project: "edits" });
    await syncNow(beta, linkId);
    expect((await beta.request(`/memory/${original.id}`, { as: beta.owner, method: "PATCH", body: { content: "changed here" } })).status).toBe(403);
    const refused = await beta.request<{ detail: string }>(`/memory/${original.id}`, { as: beta.owner, method: "DELETE" });
    expect(refused.status).toBe(403);
    expect(refused.body.detail).toBe("entry belongs to peer alpha");

    const edited = await alpha.request<Entry>(`/memory/${original.id}`, { as: alice, method: "PATCH", body: { content: "Deploys go through the canary cluster" } });
    expect(edited.status).toBe(200);
    await syncNow(beta, linkId);
    expect(byId(await entries(beta, "edits"), original.id)).toMatchObject({ content: "Deploys go through the canary cluster", version: 2 });

    expect((await alpha.request(`/memory/${original.id}`, { as: alice, method: "DELETE" })).status).toBe(204);
    const result = await syncNow(beta, linkId);
    expect(result.tombstones).toBe(1);
    expect(byId(await entries(beta, "edits"), original.id)).toBeUndefined();
    expect((await beta.request(`/memory/${original.id}`, { as: beta.owner })).status).toBe(404);
    expect(await merkleRoot(beta, "edits")).toBe(await merkleRoot(alpha, "edits"));
  });

  it("is never decayed, merged or headlined by the archivist, nor reinforced by a write", async () => {
    const first = await write(alpha, alice, { content: "Copies keep their origin's confidence", project: "shared", confidence: 0.7 });
    const second = await write(alpha, alice, { content: "Copies are merged only at their origin", project: "shared" });
    await syncNow(beta, linkId);
    const decayed = await beta.request<{ updated: number }>("/archivist/confidence", { as: beta.archivist, body: { updates: [{ id: first.id, confidence: 0.1 }] } });
    expect(decayed.status, decayed.text).toBe(200);
    expect(decayed.body.updated).toBe(0);
    const merged = await beta.request<{ detail: string }>("/archivist/merge", {
      as: beta.archivist,
      body: { sources: [{ id: first.id, version: 1 }, { id: second.id, version: 1 }], content: "Both, merged here" },
    });
    expect(merged.status).toBe(403);
    expect(merged.body.detail).toBe("entry belongs to peer alpha");
    expect((await beta.request(`/memory/${first.id}/headline`, { as: beta.archivist, method: "PATCH", body: { headline: "mine now" } })).status).toBe(403);
    const again = await beta.request<Entry & { duplicate_of?: string }>("/memory", { as: beta.owner, body: { content: first.content, project: "shared" } });
    expect(again.status).toBe(201);
    expect(again.body.id).not.toBe(first.id);
    expect(byId(await entries(beta, "shared"), first.id)).toMatchObject({ confidence: 0.7, version: 1 });
  });

  it("applies nothing twice: a sync with nothing new skips everything and moves nothing", async () => {
    await syncNow(beta, linkId);
    const root = await merkleRoot(beta, "shared");
    const idle = await syncNow(beta, linkId);
    expect(idle).toMatchObject({ applied: 0, tombstones: 0, rejected: 0, pages: 1 });
    expect(await merkleRoot(beta, "shared")).toBe(root);
  });

  it("propagates a project clear as tombstones", async () => {
    const target = linkId;
    const written = [];
    for (let index = 0; index < 5; index++) written.push(await write(alpha, alice, { content: `Note ${index} to be cleared`, project: "cleared" }));
    await syncNow(beta, target);
    expect((await entries(beta, "cleared")).length).toBe(5);
    const cleared = await alpha.request("/projects/cleared/clear", { as: alpha.owner, method: "POST", body: { memory: true } });
    expect(cleared.status, cleared.text).toBe(200);
    const result = await syncNow(beta, target);
    expect(result.tombstones).toBe(5);
    expect(await entries(beta, "cleared")).toEqual([]);
    expect(await merkleRoot(beta, "cleared")).toBe(await merkleRoot(alpha, "cleared"));
  });

  it("lets an owner suppress a copy: hidden here, not imported again at that version, back with a newer one", async () => {
    const original = await write(alpha, alice, { content: "A note someone here does not want", project: "hidden" });
    await syncNow(beta, linkId);
    expect((await beta.request(`/memory/${original.id}/suppress`, { as: beta.owner, method: "POST" })).status).toBe(204);
    expect(byId(await entries(beta, "hidden"), original.id)).toBeUndefined();
    await syncNow(beta, linkId, true);
    expect(byId(await entries(beta, "hidden"), original.id)).toBeUndefined();
    // An entry written here is deleted, not suppressed.
    const local = await write(beta, beta.owner, { content: "Beta's own", project: "hidden" });
    expect((await beta.request(`/memory/${local.id}/suppress`, { as: beta.owner, method: "POST" })).status).toBe(403);
    await alpha.request(`/memory/${original.id}`, { as: alice, method: "PATCH", body: { content: "A better note" } });
    await syncNow(beta, linkId);
    expect(byId(await entries(beta, "hidden"), original.id)).toMatchObject({ content: "A better note", version: 2 });
  });

  it("turns the link unauthorized when its token is revoked, and changes nothing", async () => {
    const tokens = (await alpha.request<{ id: string; revoked_at: string | null }[]>("/mesh/tokens", { as: alpha.owner })).body;
    const before = await entries(beta, "shared");
    await write(alpha, alice, { content: "Written after the revocation", project: "shared" });
    for (const token of tokens.filter((item) => item.revoked_at === null)) {
      expect((await alpha.request(`/mesh/tokens/${token.id}`, { as: alpha.owner, method: "DELETE" })).status).toBe(204);
    }
    const refused = await beta.request<{ code: string; detail: string }>(`/mesh/peers/${linkId}/sync`, { as: beta.owner, method: "POST" });
    expect(refused.status).toBe(502);
    expect(refused.body.detail).not.toContain("cairn_mt_");
    const shown = (await links(beta)).find((item) => item.id === linkId);
    expect(shown?.status).toBe("unauthorized");
    expect(await entries(beta, "shared")).toEqual(before);
    // Linked again with a fresh token, it works: later tests rely on it.
    const token = await mintToken(alpha, LINKED);
    await beta.request(`/mesh/peers/${linkId}`, { as: beta.owner, method: "DELETE" });
    linkId = (await quietLink(beta, alpha, LINKED, token)).id;
  });

  it("repairs a copy changed behind Cairn's back by anti-entropy", async () => {
    const lost = await write(alpha, alice, { content: "A note a restore will lose", project: "repair" });
    await write(alpha, alice, { content: "A note the restore keeps", project: "repair" });
    await syncNow(beta, linkId);
    expect(await merkleRoot(beta, "repair")).toBe(await merkleRoot(alpha, "repair"));
    // As a restore from an older backup would: a copy gone, without any change Cairn saw.
    await withDatabase(beta.dataDir, (db) => db.run("DELETE FROM memory WHERE id = ?", lost.id));
    // The feed has nothing new; only the merkle comparison finds it.
    const plain = await syncNow(beta, linkId);
    expect(plain.applied).toBe(0);
    const repaired = await syncNow(beta, linkId, true);
    expect(repaired.applied).toBe(1);
    expect(byId(await entries(beta, "repair"), lost.id)).toMatchObject({ content: lost.content, version: lost.version });
    expect(await merkleRoot(beta, "repair")).toBe(await merkleRoot(alpha, "repair"));
  });

  it("keeps mesh events to the owner role", async () => {
    await write(alpha, alice, { content: "Something to sync", project: "shared" });
    await syncNow(beta, linkId);
    const agent = await beta.agent("bob");
    const events = await beta.request<{ type: string }[]>("/events?since=seq:0&type=mesh.*&limit=500", { as: agent });
    expect(events.status).toBe(200);
    expect(events.body).toEqual([]);
    const owners = await beta.request<{ type: string }[]>("/events?since=seq:0&type=mesh.*&limit=500", { as: beta.owner });
    expect(owners.body.map((event) => event.type)).toEqual(expect.arrayContaining(["mesh.peer.linked", "mesh.sync.completed"]));
  });
});

describe("the identity of a copy", () => {
  let original: Entry;
  beforeAll(async () => {
    original = await write(alpha, alpha.owner, { content: "Written by alpha's owner", project: "shared" });
    await syncNow(beta, linkId);
  });

  it("is never a local agent", async () => {
    const copy = byId(await entries(beta, "shared"), original.id);
    expect(copy?.agent_id).toBe(`${alpha.owner.agentId}@alpha`);
    expect((await beta.request(`/agents/${encodeURIComponent(copy?.agent_id ?? "")}`, { as: beta.owner })).status).toBe(404);
  });
});

describe("a chain of links", () => {
  let gamma: TestServer;
  let gammaLink: string;
  beforeAll(async () => {
    gamma = await startTestServer({ INSTANCE_NAME: "gamma", MESH_SYNC_TICK_SECONDS: "1" });
    await createProject(gamma, "shared");
    gammaLink = (await quietLink(gamma, beta, ["shared"])).id;
  });
  afterAll(() => gamma?.close());

  it("passes a copy on with its origin, and the third instance's copy is as read-only", async () => {
    const original = await write(alpha, alice, { content: "Travels two hops", project: "shared" });
    await syncNow(beta, linkId);
    await syncNow(gamma, gammaLink);
    const copy = byId(await entries(gamma, "shared"), original.id);
    expect(copy).toMatchObject({ agent_id: "alice@alpha", version: 1, source: { kind: "mesh", origin: alphaId, origin_name: "alpha", link_id: gammaLink } });
    expect((await gamma.request(`/memory/${original.id}`, { as: gamma.owner, method: "DELETE" })).status).toBe(403);
    // An edit at the origin reaches the end of the chain.
    await alpha.request(`/memory/${original.id}`, { as: alice, method: "PATCH", body: { content: "Travels two hops, edited" } });
    await syncNow(beta, linkId);
    await syncNow(gamma, gammaLink);
    expect(byId(await entries(gamma, "shared"), original.id)).toMatchObject({ content: "Travels two hops, edited", version: 2 });
  });
});

describe("a copy moved with its team (CONTRACT §10a, §16)", () => {
  let delta: TestServer;
  let moved: Entry;
  let exported: string;
  beforeAll(async () => {
    delta = await startTestServer({ INSTANCE_NAME: "delta", MESH_SYNC_TICK_SECONDS: "1" });
    moved = await write(alpha, alice, { content: "Moved with the team to a new server", project: "moved" });
    await write(alpha, alice, { type: "doc", content: "A doc that moves too", project: "moved" });
    await syncNow(beta, linkId);
    const response = await beta.request("/admin/export?project=moved", { as: beta.owner });
    expect(response.status, response.text).toBe(200);
    exported = response.text;
  });
  afterAll(() => delta?.close());

  const importInto = async (target: TestServer, text: string): Promise<{ errors: unknown[] }> => {
    const response = await target.request<{ errors: unknown[] }>("/admin/import", { as: target.owner, body: text, headers: { "content-type": "application/x-ndjson" } });
    expect(response.status, response.text).toBe(200);
    return response.body;
  };

  it("keeps its origin: read-only, in the origin's merkle summary, and brought up to date by a link to the origin", async () => {
    expect((await importInto(delta, exported)).errors).toEqual([]);
    const copy = byId(await entries(delta, "moved"), moved.id);
    expect(copy).toMatchObject({ agent_id: "alice@alpha", version: 1, source: { kind: "mesh", origin: alphaId } });
    expect((await delta.request(`/memory/${moved.id}`, { as: delta.owner, method: "PATCH", body: { content: "changed here" } })).status).toBe(403);
    // The same entries at the same versions from the same origin: the same summary as the origin's.
    expect(await merkleRoot(delta, "moved")).toBe(await merkleRoot(alpha, "moved"));

    const deltaLink = (await quietLink(delta, alpha, ["moved"])).id;
    await alpha.request(`/memory/${moved.id}`, { as: alice, method: "PATCH", body: { content: "Moved with the team, then edited at its origin" } });
    const result = await syncNow(delta, deltaLink);
    expect(result).toMatchObject({ applied: 1, rejected: 0 });
    expect(byId(await entries(delta, "moved"), moved.id)).toMatchObject({ content: "Moved with the team, then edited at its origin", version: 2, source: { origin: alphaId, link_id: deltaLink } });
  });

  it("is mended at the next start when an older import stored it without its origin", async () => {
    const original = await write(alpha, alice, { content: "Imported before the import kept origins", project: "mended" });
    await syncNow(beta, linkId);
    const dataDir = tempDir();
    let epsilon = await startTestServer({ DATA_DIR: dataDir, INSTANCE_NAME: "epsilon" });
    try {
      const file = await beta.request("/admin/export?project=mended", { as: beta.owner });
      expect((await importInto(epsilon, file.text)).errors).toEqual([]);
      await epsilon.close();
      // What the import used to store: no origin, and a leaf naming this instance as the origin.
      await withDatabase(dataDir, async (db) => {
        await db.run("UPDATE memory SET origin = NULL, merkle_leaf = NULL WHERE id = ?", original.id);
        // As a store from before that migration: it and every later one not yet applied.
        await db.run(
          "DELETE FROM schema_migrations WHERE version >= (SELECT version FROM schema_migrations WHERE name LIKE '%imported_copies_origin%')",
        );
      });
      epsilon = await startTestServer({ DATA_DIR: dataDir, INSTANCE_NAME: "epsilon" });
      expect(await merkleRoot(epsilon, "mended")).toBe(await merkleRoot(alpha, "mended"));
      const epsilonLink = (await quietLink(epsilon, alpha, ["mended"])).id;
      await alpha.request(`/memory/${original.id}`, { as: alice, method: "PATCH", body: { content: "Mended, then edited at its origin" } });
      expect(await syncNow(epsilon, epsilonLink)).toMatchObject({ applied: 1, rejected: 0 });
      expect(byId(await entries(epsilon, "mended"), original.id)).toMatchObject({ content: "Mended, then edited at its origin", version: 2 });
    } finally {
      await epsilon.close();
    }
  });

  it("comes home as its origin's own entry when imported there", async () => {
    const line = exported.split("\n").find((text) => text.includes(moved.id));
    const homecoming = JSON.parse(line ?? "{}") as Record<string, unknown>;
    // An id the origin no longer holds: the copy is all that is left of the entry. (In a project of
    // its own here, so the other test's summaries of "moved" stay the origin's in any order.)
    const lost = { ...homecoming, id: randomUUID(), project: "elsewhere", content: "An entry alpha lost and got back from a copy" };
    expect((await importInto(alpha, `${JSON.stringify(lost)}\n`)).errors).toEqual([]);
    const back = byId(await entries(alpha, "elsewhere"), lost.id);
    expect(back).toMatchObject({ agent_id: "alice@alpha", source: null });
    expect((await alpha.request(`/memory/${lost.id}`, { as: alpha.owner, method: "PATCH", body: { content: "Edited where it was written" } })).status).toBe(200);
  });
});
