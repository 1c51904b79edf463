import { createHash } from "node:crypto";
import { describe, expect } from "vitest";
import type { MerkleSummary as Summary } from "../../src/wire/merkle.js";
import { withDatabase } from "../helpers/database.js";
import { test } from "../helpers/fixtures.js";
import { patch, write, type MemoryEntry } from "../helpers/memory.js";
import { instanceOf } from "../helpers/memory-feed.js";
import { startTestServer, tempDir, type Credentials, type ErrorBody, type TestServer } from "../helpers/server.js";

// GET /memory/merkle (CONTRACT §15), checked against hashes this file computes itself from the
// entries as the API shows them, with the definitions docs/feeds.md gives peers.

const sha256 = (text: string): string => createHash("sha256").update(text, "utf8").digest("hex");
/** An entry's content key: SHA-256 of its content, NFKC, trimmed, white space collapsed, lower-cased. */
const contentKey = (content: string): string => sha256(content.normalize("NFKC").trim().replace(/\s+/gu, " ").toLowerCase());

/** What the test knows of an entry: as the API last showed it, and whether it has been deleted since. */
interface Known {
  id: string;
  version: number;
  content: string;
  project: string | null;
  deleted: boolean;
}

const known = (entry: MemoryEntry, deleted = false): Known => ({ id: entry.id, version: entry.version, content: entry.content, project: entry.project, deleted });

function leafOf(entry: Known, origin: string): string {
  return sha256([entry.id, origin, String(entry.version), entry.deleted ? "1" : "0", entry.deleted ? "" : contentKey(entry.content), entry.project ?? ""].join("|"));
}

/** The summary of `entries` (the replicable ones of one project), computed here from scratch. */
function expectedSummary(project: string | null, entries: Known[], origin: string): Summary {
  const buckets = new Map<string, string[]>();
  for (const entry of entries) {
    const bucket = sha256(entry.id).slice(0, 2);
    buckets.set(bucket, [...(buckets.get(bucket) ?? []), `${entry.id}:${leafOf(entry, origin)}`]);
  }
  const hashes = Object.fromEntries([...buckets].map(([bucket, lines]) => [bucket, sha256(lines.sort().join("\n"))]));
  const root = sha256(Object.keys(hashes).sort().map((bucket) => `${bucket}:${hashes[bucket]}`).join("\n"));
  return { project, root, count: entries.length, buckets: hashes };
}

const merkle = (server: TestServer, as: Credentials, query: string) => server.request<Summary>(`/memory/merkle?${query}`, { as });

async function expectSummary(server: TestServer, as: Credentials, project: string | null, entries: Known[]): Promise<Summary> {
  const { instance_id: origin } = await instanceOf(server);
  const response = await merkle(server, as, `project=${project ?? ""}`);
  expect(response.status, response.text).toBe(200);
  const expected = expectedSummary(project, entries, origin);
  expect(response.body).toEqual(expected);
  for (const bucket of Object.keys(expected.buckets)) {
    const detail = await server.request<{ project: string | null; bucket: string; entries: Record<string, string> }>(`/memory/merkle?project=${project ?? ""}&bucket=${bucket}`, { as });
    expect(detail.status).toBe(200);
    const inBucket = entries.filter((entry) => sha256(entry.id).slice(0, 2) === bucket).sort((a, b) => (a.id < b.id ? -1 : 1));
    expect(detail.body).toEqual({ project, bucket, entries: Object.fromEntries(inBucket.map((entry) => [entry.id, leafOf(entry, origin)])) });
  }
  return response.body;
}

const it = test.extend("alice", ({ server }) => server.agent("alice")).extend("bob", ({ server }) => server.agent("bob"));

async function project(server: TestServer, owner: Credentials, name: string, ...members: Credentials[]): Promise<void> {
  expect((await server.request("/projects", { as: owner, body: { name } })).status).toBe(201);
  for (const member of members) expect((await server.request(`/projects/${name}/join`, { as: member, method: "POST" })).status).toBe(200);
}

describe("GET /memory/merkle", () => {
  it("summarises a project's shared memory, doc and skill entries, tombstones included, as the test computes it", async ({ server, alice }) => {
    await project(server, alice, "atlas");
    const entries: Known[] = [];
    for (let n = 0; n < 6; n++) entries.push(known(await write(server, alice, { content: `Atlas note ${n}`, project: "atlas" })));
    entries.push(known(await write(server, alice, { content: "Atlas doc", type: "doc", project: "atlas" })));
    entries.push(known(await write(server, alice, { content: "Atlas skill", type: "skill", project: "atlas" })));
    // Never replicated: private entries, directives, compiled code, and other projects' entries.
    await write(server, alice, { content: "Alice's own atlas note", scope: "agent", project: "atlas" });
    expect((await server.request("/memory", { as: server.owner, body: { content: "Atlas directive", type: "directive", project: "atlas" } })).status).toBe(201);
    const unit = { path: "a.ts", symbol: "", kind: "module", lang: "typescript", start_line: 1, end_line: 1, sha: "b".repeat(64), description: "module a", deps: [] };
    expect((await server.request("/compile", { as: alice, body: { project: "atlas", units: [unit] } })).status).toBe(200);
    await write(server, alice, { content: "A global note", project: null });
    const gone = entries[2] as Known;
    expect((await server.request(`/memory/${gone.id}`, { as: alice, method: "DELETE" })).status).toBe(204);
    gone.deleted = true;
    gone.version += 1;

    const summary = await expectSummary(server, alice, "atlas", entries);
    expect(summary.count).toBe(8);
    // The owner sees every project, and the same summary.
    expect((await merkle(server, server.owner, "project=atlas")).body).toEqual(summary);
  });

  it("follows updates, deletes and moves, bucket by bucket", async ({ server, alice }) => {
    await project(server, alice, "delta-a");
    await project(server, alice, "delta-b");
    const entries: Known[] = [];
    for (let n = 0; n < 12; n++) entries.push(known(await write(server, alice, { content: `Moving note ${n}`, project: "delta-a" })));
    const before = await expectSummary(server, alice, "delta-a", entries);

    const edited = entries[0] as Known;
    const updated = await patch(server, alice, edited.id, { content: "Moving note 0, edited" });
    expect(updated.status).toBe(200);
    entries[0] = known(updated.body);
    const afterEdit = await expectSummary(server, alice, "delta-a", entries);
    expect(afterEdit.root).not.toBe(before.root);
    const editedBucket = sha256(edited.id).slice(0, 2);
    for (const [bucket, hash] of Object.entries(afterEdit.buckets)) if (bucket !== editedBucket) expect(hash).toBe(before.buckets[bucket]);

    // A change that leaves content and version alone (a headline) changes no leaf.
    expect((await server.request(`/memory/${edited.id}/headline`, { as: server.archivist, method: "PATCH", body: { headline: "Edited" } })).status).toBe(200);
    expect((await merkle(server, alice, "project=delta-a")).body.root).toBe(afterEdit.root);

    (entries[1] as Known).deleted = true;
    (entries[1] as Known).version += 1;
    expect((await server.request(`/memory/${entries[1]?.id}`, { as: alice, method: "DELETE" })).status).toBe(204);
    await expectSummary(server, alice, "delta-a", entries);

    const moved = entries[2] as Known;
    const toB = await patch(server, alice, moved.id, { project: "delta-b" });
    expect(toB.status).toBe(200);
    entries.splice(2, 1);
    await expectSummary(server, alice, "delta-a", entries);
    await expectSummary(server, alice, "delta-b", [known(toB.body)]);

    const hidden = entries[3] as Known;
    expect((await patch(server, alice, hidden.id, { scope: "agent" })).status).toBe(200);
    entries.splice(3, 1);
    await expectSummary(server, alice, "delta-a", entries);
    expect((await merkle(server, alice, "project=delta-a")).body.count).toBe(10);
  });

  it("stays right when many buckets change at once, and when nothing changed", async ({ server, alice, bob }) => {
    const entries: Known[] = [known(await write(server, alice, { content: "Before the burst", project: null }))];
    const first = await expectSummary(server, alice, null, entries);
    // Other projects' changes move the change order too: the summary must stay as it was.
    await project(server, bob, "elsewhere");
    await write(server, bob, { content: "Elsewhere", project: "elsewhere" });
    expect((await merkle(server, alice, "project=")).body).toEqual(first);
    // Far more changed buckets than a summary re-reads one by one.
    const burst = await Promise.all(Array.from({ length: 80 }, (_, n) => write(server, n % 2 === 0 ? alice : bob, { content: `Burst note ${n}`, project: null })));
    entries.push(...burst.map((entry) => known(entry)));
    await expectSummary(server, bob, null, entries);
  });

  it("summarises the global entries with project= (empty), and an empty selection as sha256 of nothing", async ({ server, alice, bob }) => {
    await project(server, alice, "empty");
    expect((await merkle(server, alice, "project=empty")).body).toEqual({ project: "empty", root: sha256(""), count: 0, buckets: {} });
    const global = [known(await write(server, alice, { content: "Global one", project: null })), known(await write(server, bob, { content: "Global two", project: null }))];
    await expectSummary(server, bob, null, global);
    const bucket = await server.request(`/memory/merkle?project=&bucket=zz`, { as: bob });
    expect(bucket.status).toBe(422);
    expect((await server.request(`/memory/merkle?project=&bucket=${sha256(global[0]?.id ?? "").slice(0, 2).toUpperCase()}`, { as: bob })).status).toBe(200);
  });

  it("answers 404 for a project outside the caller's reach, and 422 without a project", async ({ server, alice, bob }) => {
    await project(server, alice, "private-ops");
    await write(server, alice, { content: "Ops note", project: "private-ops" });
    for (const query of ["project=private-ops", "project=private-ops&bucket=00", "project=no-such-project"]) {
      const refused = await server.request<ErrorBody>(`/memory/merkle?${query}`, { as: bob });
      expect(refused.status, query).toBe(404);
      expect(refused.body.code).toBe("NOT_FOUND");
    }
    expect((await merkle(server, server.owner, "project=no-such-project")).status).toBe(404);
    const missing = await server.request<ErrorBody>("/memory/merkle", { as: alice });
    expect(missing.status).toBe(422);
    expect(missing.body.errors?.[0]?.path).toBe("project");
    // Joining brings it into reach.
    expect((await server.request("/projects/private-ops/join", { as: bob, method: "POST" })).status).toBe(200);
    expect((await merkle(server, bob, "project=private-ops")).status).toBe(200);
  });
});

describe("leaves of entries written before the summary existed", () => {
  test("are stamped at the next start", async () => {
    const dataDir = tempDir();
    let server = await startTestServer({ DATA_DIR: dataDir });
    try {
      const alice = await server.agent("alice");
      const entries: Known[] = [];
      for (let n = 0; n < 5; n++) entries.push(known(await write(server, alice, { content: `Old note ${n}`, project: null })));
      await server.close();
      // As migration 018 leaves an older store: no leaf, no bucket.
      await withDatabase(dataDir, (db) => db.run("UPDATE memory SET merkle_leaf = NULL, merkle_bucket = NULL"));
      server = await startTestServer({ DATA_DIR: dataDir });
      await expectSummary(server, alice, null, entries);
    } finally {
      await server.close();
    }
  });
});
