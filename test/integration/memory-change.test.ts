import { describe, expect } from "vitest";
import { test } from "../helpers/fixtures.js";
import { eventsOf, ids, list, patch, read, searchHits, UNKNOWN_ID, write, type EventRecord, type MemoryEntry } from "../helpers/memory.js";
import { RFC3339_MS, type ErrorBody, type TestServer } from "../helpers/server.js";
import { afterMillisecond, eventually } from "../helpers/wait.js";

/** Changing memory, black box: PATCH, DELETE, bulk delete, expiry (CONTRACT §3). */

async function eventsAbout(server: TestServer, type: string, memoryId: string): Promise<EventRecord[]> {
  return (await eventsOf(server, type)).filter((event) => event.payload.memory_id === memoryId);
}

describe("updating an entry with PATCH", () => {
  const it = test
    .extend("author", ({ server }) => server.agent("author"))
    .extend("stranger", ({ server }) => server.agent("stranger"));

  it("applies a change with a matching quoted If-Match and answers 200 with version + 1", async ({ server, author }) => {
    const entry = await write(server, author, { content: "If-Match quoted original" });
    const response = await patch(server, author, entry.id, { content: "If-Match quoted revised" }, { "If-Match": '"1"' });
    expect(response.status).toBe(200);
    expect(response.body).toMatchObject({ id: entry.id, content: "If-Match quoted revised", version: 2 });
  });

  it("accepts If-Match without quotes", async ({ server, author }) => {
    const entry = await write(server, author, { content: "If-Match bare original" });
    const response = await patch(server, author, entry.id, { tags: ["bare"] }, { "If-Match": "1" });
    expect(response.status).toBe(200);
    expect(response.body).toMatchObject({ tags: ["bare"], version: 2 });
  });

  it("answers a stale If-Match with 412 and current_version, changing nothing", async ({ server, author }) => {
    const entry = await write(server, author, { content: "Stale original" });
    await patch(server, author, entry.id, { content: "Stale first revision" });
    const response = await patch<ErrorBody>(server, author, entry.id, { content: "Stale lost update" }, { "If-Match": '"1"' });
    expect(response.status).toBe(412);
    expect(response.body).toMatchObject({ code: "PRECONDITION_FAILED", current_version: 2 });
    const current = await read(server, author, entry.id);
    expect(current.body).toMatchObject({ content: "Stale first revision", version: 2 });
    expect(current.headers.get("etag")).toBe('"2"');
  });

  it("lets exactly one of two concurrent PATCHes with the same If-Match win", async ({ server, author }) => {
    const entry = await write(server, author, { content: "Concurrent edit original" });
    const [left, right] = await Promise.all([
      patch<ErrorBody>(server, author, entry.id, { content: "Concurrent edit left" }, { "If-Match": '"1"' }),
      patch<ErrorBody>(server, author, entry.id, { content: "Concurrent edit right" }, { "If-Match": '"1"' }),
    ]);
    expect([left.status, right.status].sort()).toEqual([200, 412]);
    const loser = left.status === 412 ? left : right;
    expect(loser.body.current_version).toBe(2);
    const current = await read(server, author, entry.id);
    expect(current.body.version).toBe(2);
    expect(current.body.content).toBe(left.status === 200 ? "Concurrent edit left" : "Concurrent edit right");
  });

  it("answers an unparsable If-Match with 400, changing nothing", async ({ server, author }) => {
    const entry = await write(server, author, { content: "Garbage If-Match original" });
    const response = await patch<ErrorBody>(server, author, entry.id, { content: "Garbage If-Match revised" }, { "If-Match": "banana" });
    expect(response.status).toBe(400);
    expect(response.body.code).toBe("BAD_REQUEST");
    expect((await read(server, author, entry.id)).body).toMatchObject({ content: "Garbage If-Match original", version: 1 });
  });

  it("rejects unknown fields with 422", async ({ server, author }) => {
    const entry = await write(server, author, { content: "Unknown field original" });
    const response = await patch<ErrorBody>(server, author, entry.id, { colour: "blue" });
    expect(response.status).toBe(422);
    expect(response.body.code).toBe("VALIDATION_FAILED");
    const readOnly = await patch<ErrorBody>(server, author, entry.id, { version: 7 });
    expect(readOnly.status).toBe(422);
    expect((await read(server, author, entry.id)).body.version).toBe(1);
  });

  it("answers an empty body with 200 and the entry unchanged", async ({ server, author }) => {
    const entry = await write(server, author, { content: "Empty patch original" });
    const response = await patch(server, author, entry.id, {});
    expect(response.status).toBe(200);
    expect(response.body).toMatchObject({ content: "Empty patch original", version: 1, updated_at: entry.updated_at });
    expect(await eventsAbout(server, "memory.updated", entry.id)).toEqual([]);
  });

  it("does not bump the version when the patch repeats the current values", async ({ server, author }) => {
    const entry = await write(server, author, { content: "Same values original", tags: ["same"], confidence: 0.5 });
    const response = await patch(server, author, entry.id, { content: "Same values original", tags: ["same"], confidence: 0.5 });
    expect(response.status).toBe(200);
    expect(response.body).toMatchObject({ version: 1, updated_at: entry.updated_at });
  });

  it("bumps version and updated_at on a real change and emits memory.updated", async ({ server, author }) => {
    const entry = await write(server, author, { content: "Real change original", confidence: 0.5 });
    await afterMillisecond(entry.updated_at);
    const response = await patch(server, author, entry.id, { confidence: 0.8, tags: ["changed"] });
    expect(response.status).toBe(200);
    expect(response.body).toMatchObject({ version: 2, confidence: 0.8, tags: ["changed"], created_at: entry.created_at });
    expect(response.body.updated_at > entry.updated_at).toBe(true);
    const events = await eventsAbout(server, "memory.updated", entry.id);
    expect(events).toHaveLength(1);
    expect(events[0]).toMatchObject({ agent_id: "author", payload: { memory_id: entry.id, version: 2 } });
  });

  it("re-embeds changed content so search finds the new wording", async ({ server, author }) => {
    const entry = await write(server, author, { content: "Alpha wording about marmalade recipes" });
    await patch(server, author, entry.id, { content: "Beta wording about quantum tunnelling" });
    const hits = await searchHits(server, author, "Beta wording about quantum tunnelling");
    const hit = hits.find((candidate) => candidate.id === entry.id);
    expect(hit?.match).toBe("both");
    // The hash embedder maps identical text to the same vector: cosine 1 proves the new vector.
    expect(hit?.similarity).toBeGreaterThan(0.999);
    const old = (await searchHits(server, author, "Alpha wording about marmalade recipes")).find((candidate) => candidate.id === entry.id);
    expect(old?.similarity ?? 0).toBeLessThan(0.9);
    // The keyword index follows too: the old word no longer matches as a keyword.
    const byOldWord = (await searchHits(server, author, "marmalade")).find((candidate) => candidate.id === entry.id);
    expect(byOldWord?.match ?? "semantic").toBe("semantic");
    const byNewWord = (await searchHits(server, author, "tunnelling")).find((candidate) => candidate.id === entry.id);
    expect(byNewWord?.match).toBe("both");
  });

  it("lets the owner role and the archivist change another agent's entry", async ({ server, author }) => {
    const entry = await write(server, author, { content: "Edited by others" });
    const byOwner = await patch(server, server.owner, entry.id, { tags: ["owner-edit"] });
    expect(byOwner.status).toBe(200);
    expect(byOwner.body.agent_id).toBe("author");
    const byArchivist = await patch(server, server.archivist, entry.id, { confidence: 0.3 });
    expect(byArchivist.status).toBe(200);
    expect(byArchivist.body).toMatchObject({ version: 3, tags: ["owner-edit"], confidence: 0.3 });
  });

  it("refuses a change by another agent with 403", async ({ server, author, stranger }) => {
    const entry = await write(server, author, { content: "Not yours to edit" });
    const response = await patch<ErrorBody>(server, stranger, entry.id, { content: "Vandalised" });
    expect(response.status).toBe(403);
    expect(response.body.code).toBe("FORBIDDEN");
    expect((await read(server, author, entry.id)).body).toMatchObject({ content: "Not yours to edit", version: 1 });
  });

  it("answers 404 for another agent's private entry and for an unknown id", async ({ server, author, stranger }) => {
    const entry = await write(server, author, { content: "Private, not patchable by others", scope: "agent" });
    expect((await patch(server, stranger, entry.id, { content: "x" })).status).toBe(404);
    expect((await patch(server, server.owner, entry.id, { content: "x" })).status).toBe(404);
    expect((await patch(server, author, UNKNOWN_ID, { content: "x" })).status).toBe(404);
  });

  it("accepts an id prefix", async ({ server, author }) => {
    const entry = await write(server, author, { content: "Patched by prefix" });
    const response = await patch(server, author, entry.id.slice(0, 8), { tags: ["prefix"] });
    expect(response.status).toBe(200);
    expect(response.body.id).toBe(entry.id);
  });

  it("refuses to move an entry into a project the agent is not a member of with 403", async ({ server, author }) => {
    const entry = await write(server, author, { content: "Moving projects" });
    const response = await patch<ErrorBody>(server, author, entry.id, { project: "p1" });
    expect(response.status).toBe(403);
    expect(response.body.detail).toBe("not a member of this project");
  });

  it("rejects an expires_at in the past with 422", async ({ server, author }) => {
    const entry = await write(server, author, { content: "Expiry in the past by patch" });
    const response = await patch<ErrorBody>(server, author, entry.id, { expires_at: "2001-01-01T00:00:00Z" });
    expect(response.status).toBe(422);
  });

  it("refuses to turn a memory into a directive with 422, even for a directive writer", async ({ server }) => {
    const entry = await write(server, server.owner, { content: "Owner memory, not a directive" });
    const response = await patch<ErrorBody>(server, server.owner, entry.id, { type: "directive" });
    expect(response.status).toBe(422);
    expect((await read(server, server.owner, entry.id)).body.type).toBe("memory");
  });

  it("refuses to turn a directive into another type with 422", async ({ server }) => {
    const directive = await write(server, server.owner, { content: "Owner directive stays a directive", type: "directive" });
    const response = await patch<ErrorBody>(server, server.owner, directive.id, { type: "memory" });
    expect(response.status).toBe(422);
    expect((await read(server, server.owner, directive.id)).body.type).toBe("directive");
  });

  it("allows changing between the other types", async ({ server, author }) => {
    const entry = await write(server, author, { content: "Memory promoted to doc" });
    const response = await patch(server, author, entry.id, { type: "doc" });
    expect(response.status).toBe(200);
    expect(response.body).toMatchObject({ type: "doc", version: 2 });
  });
});

describe("who may change a directive (DIRECTIVE_WRITERS=human,alice)", () => {
  const it = test
    .extend("alice", ({ server }) => server.agent("alice"))
    .extend("bob", ({ server }) => server.agent("bob"));
  it.override("serverEnv", { DIRECTIVE_WRITERS: "human,alice" });

  it("lets the author of a directive patch it", async ({ server, alice }) => {
    const directive = await write(server, alice, { content: "Alice directive v1", type: "directive" });
    const response = await patch(server, alice, directive.id, { content: "Alice directive v2" });
    expect(response.status).toBe(200);
    expect(response.body).toMatchObject({ content: "Alice directive v2", version: 2, type: "directive", confidence: 1 });
  });

  it("refuses a PATCH of a directive by anyone but its author, the owner role included, with 403", async ({ server, alice, bob }) => {
    const directive = await write(server, alice, { content: "Alice directive guarded", type: "directive" });
    for (const caller of [server.owner, server.archivist, bob]) {
      const response = await patch<ErrorBody>(server, caller, directive.id, { content: "Overridden" });
      expect(response.status, caller.agentId).toBe(403);
      expect(response.body.code).toBe("FORBIDDEN");
    }
    expect((await read(server, alice, directive.id)).body).toMatchObject({ content: "Alice directive guarded", version: 1 });
  });

  it("refuses a DELETE of a directive by anyone but its author with 403", async ({ server, alice, bob }) => {
    const directive = await write(server, alice, { content: "Alice directive undeletable by others", type: "directive" });
    for (const caller of [server.owner, server.archivist, bob]) {
      const response = await server.request<ErrorBody>(`/memory/${directive.id}`, { as: caller, method: "DELETE" });
      expect(response.status, caller.agentId).toBe(403);
    }
    expect((await read(server, alice, directive.id)).status).toBe(200);
    expect((await server.request(`/memory/${directive.id}`, { as: alice, method: "DELETE" })).status).toBe(204);
  });

  it("lets the owner patch its own directive", async ({ server }) => {
    const directive = await write(server, server.owner, { content: "Owner directive v1", type: "directive" });
    const response = await patch(server, server.owner, directive.id, { content: "Owner directive v2" });
    expect(response.status).toBe(200);
    expect(response.body.version).toBe(2);
  });

  it("lets the archivist patch a non-directive memory but not a directive", async ({ server }) => {
    const memory = await write(server, server.owner, { content: "Owner memory the archivist may tidy" });
    expect((await patch(server, server.archivist, memory.id, { tags: ["tidied"] })).status).toBe(200);
    const directive = await write(server, server.owner, { content: "Owner directive the archivist may not touch", type: "directive" });
    const response = await patch<ErrorBody>(server, server.archivist, directive.id, { tags: ["tidied"] });
    expect(response.status).toBe(403);
    expect((await read(server, server.owner, directive.id)).body.tags).toEqual([]);
  });
});

describe("deleting entries", () => {
  const it = test
    .extend("author", ({ server }) => server.agent("author"))
    .extend("stranger", ({ server }) => server.agent("stranger"));

  it("answers 204 and hides the entry from get, list and search", async ({ server, author }) => {
    const entry = await write(server, author, { content: "Doomed entry about pelicans" });
    const response = await server.request(`/memory/${entry.id}`, { as: author, method: "DELETE" });
    expect(response.status).toBe(204);
    expect(response.text).toBe("");
    expect((await read(server, author, entry.id)).status).toBe(404);
    expect((await read(server, server.owner, entry.id)).status).toBe(404);
    expect(ids(await list(server, author))).not.toContain(entry.id);
    expect((await searchHits(server, author, "pelicans")).map((hit) => hit.id)).not.toContain(entry.id);
  });

  it("reports a deleted entry in delta as a tombstone {id, deleted_at, updated_at, version}", async ({ server, author }) => {
    const since = new Date(Date.now() - 1000).toISOString();
    const entry = await write(server, author, { content: "Entry that becomes a tombstone" });
    await patch(server, author, entry.id, { tags: ["v2"] });
    await server.request(`/memory/${entry.id}`, { as: author, method: "DELETE" });
    const response = await server.request<Record<string, unknown>[]>(`/memory/delta?since=${since}&limit=500`, { as: author });
    const tombstone = response.body.find((item) => item.id === entry.id);
    expect(tombstone).toBeDefined();
    expect(Object.keys(tombstone ?? {}).sort()).toEqual(["deleted_at", "id", "updated_at", "version"]);
    // The edit made version 2; the deletion is version 3 (a peer replaces its copy with the tombstone).
    expect(tombstone).toMatchObject({ id: entry.id, version: 3 });
    expect(tombstone?.deleted_at).toMatch(RFC3339_MS);
  });

  it("emits memory.deleted", async ({ server, author }) => {
    const entry = await write(server, author, { content: "Entry whose deletion is an event" });
    await server.request(`/memory/${entry.id}`, { as: author, method: "DELETE" });
    const events = await eventsAbout(server, "memory.deleted", entry.id);
    expect(events).toHaveLength(1);
    expect(events[0]).toMatchObject({ type: "memory.deleted", agent_id: "author", payload: { memory_id: entry.id } });
  });

  it("answers 404 for a second delete and for an unknown id", async ({ server, author }) => {
    const entry = await write(server, author, { content: "Deleted twice" });
    expect((await server.request(`/memory/${entry.id}`, { as: author, method: "DELETE" })).status).toBe(204);
    expect((await server.request(`/memory/${entry.id}`, { as: author, method: "DELETE" })).status).toBe(404);
    expect((await server.request(`/memory/${UNKNOWN_ID}`, { as: author, method: "DELETE" })).status).toBe(404);
  });

  it("follows the PATCH permission rules: another agent 403, the owner role and the archivist allowed", async ({ server, author, stranger }) => {
    const entry = await write(server, author, { content: "Deletable by owner" });
    const refused = await server.request<ErrorBody>(`/memory/${entry.id}`, { as: stranger, method: "DELETE" });
    expect(refused.status).toBe(403);
    expect((await read(server, author, entry.id)).status).toBe(200);
    expect((await server.request(`/memory/${entry.id}`, { as: server.owner, method: "DELETE" })).status).toBe(204);
    const other = await write(server, author, { content: "Deletable by archivist" });
    expect((await server.request(`/memory/${other.id}`, { as: server.archivist, method: "DELETE" })).status).toBe(204);
  });

  it("answers 404 when another agent deletes a private entry", async ({ server, author, stranger }) => {
    const entry = await write(server, author, { content: "Private, not deletable by others", scope: "agent" });
    expect((await server.request(`/memory/${entry.id}`, { as: stranger, method: "DELETE" })).status).toBe(404);
    expect((await server.request(`/memory/${entry.id}`, { as: server.owner, method: "DELETE" })).status).toBe(404);
    expect((await read(server, author, entry.id)).status).toBe(200);
  });

  it("bulk-deletes with 200 {deleted, skipped}, giving a reason for each skipped id", async ({ server, author, stranger }) => {
    const mine = await write(server, author, { content: "Bulk mine one" });
    const mineToo = await write(server, author, { content: "Bulk mine two" });
    const theirs = await write(server, stranger, { content: "Bulk theirs" });
    const theirPrivate = await write(server, stranger, { content: "Bulk their private", scope: "agent" });
    const response = await server.request<{ deleted: string[]; skipped: { id: string; reason: string }[] }>("/memory", {
      as: author,
      method: "DELETE",
      body: { ids: [mine.id, mineToo.id.slice(0, 8), theirs.id, theirPrivate.id, UNKNOWN_ID] },
    });
    expect(response.status).toBe(200);
    expect(response.body.deleted.sort()).toEqual([mine.id, mineToo.id].sort());
    const reasons = new Map(response.body.skipped.map((skip) => [skip.id, skip.reason]));
    expect(reasons.size).toBe(3);
    expect(reasons.get(theirs.id)).toBe("forbidden");
    expect(reasons.get(UNKNOWN_ID)).toBe("not found");
    // No existence oracle: a private entry of another agent reads exactly like an unknown id.
    expect(reasons.get(theirPrivate.id)).toBe("not found");

    expect((await read(server, author, mine.id)).status).toBe(404);
    expect((await read(server, author, mineToo.id)).status).toBe(404);
    expect((await read(server, author, theirs.id)).status).toBe(200);
    expect(await eventsAbout(server, "memory.deleted", mine.id)).toHaveLength(1);
    expect(await eventsAbout(server, "memory.deleted", mineToo.id)).toHaveLength(1);
    expect(await eventsAbout(server, "memory.deleted", theirs.id)).toHaveLength(0);
  });

  it("rejects a bulk delete without ids with 422", async ({ server, author }) => {
    const response = await server.request("/memory", { as: author, method: "DELETE", body: { ids: [] } });
    expect(response.status).toBe(422);
  });
});

describe("expiring entries", () => {
  // No background jobs: whatever hides an expired entry here is the read path, not the sweeper.
  const it = test.extend("author", ({ server }) => server.agent("expiring-author"));
  it.override("serverOptions", { jobs: false });

  it("rejects an expires_at in the past with 422", async ({ server, author }) => {
    const response = await server.request<ErrorBody>("/memory", {
      as: author,
      body: { content: "Already expired", expires_at: new Date(Date.now() - 60_000).toISOString() },
    });
    expect(response.status).toBe(422);
    expect(response.body.errors?.map((error) => error.path)).toContain("expires_at");
  });

  it("normalises expires_at to UTC with milliseconds", async ({ server, author }) => {
    const inAnHour = new Date(Date.now() + 3600_000);
    inAnHour.setUTCMilliseconds(0);
    const offset = inAnHour.toISOString().replace(".000Z", "+00:00");
    const entry = await write(server, author, { content: "Expires in an hour", expires_at: offset });
    expect(entry.expires_at).toBe(inAnHour.toISOString());
  });

  it("hides an entry from get, list and search as soon as expires_at has passed, before any sweep", async ({ server, author }) => {
    const since = new Date(Date.now() - 1000).toISOString();
    const expiresAt = new Date(Date.now() + 1500).toISOString();
    const entry = await write(server, author, { content: "Ephemeral note about flamingos", expires_at: expiresAt });
    expect(entry.expires_at).toBe(expiresAt);
    expect((await read(server, author, entry.id)).status).toBe(200);

    const gone = await eventually(async () => (await read(server, author, entry.id)).status === 404);
    expect(gone).toBe(true);
    expect(Date.now()).toBeGreaterThanOrEqual(Date.parse(expiresAt));
    expect(ids(await list(server, author))).not.toContain(entry.id);
    expect((await searchHits(server, author, "flamingos")).map((hit) => hit.id)).not.toContain(entry.id);
    const response = await server.request<Record<string, unknown>[]>(`/memory/delta?since=${since}&limit=500`, { as: author });
    const tombstone = response.body.find((item) => item.id === entry.id);
    expect(Object.keys(tombstone ?? {}).sort()).toEqual(["deleted_at", "id", "updated_at", "version"]);
    expect(await eventsAbout(server, "memory.deleted", entry.id)).toEqual([]);
  });

  it("does not count an expired entry as a duplicate", async ({ server, author }) => {
    const content = "Expiring duplicate candidate";
    const entry = await write(server, author, { content, expires_at: new Date(Date.now() + 1000).toISOString() });
    expect(await eventually(async () => (await read(server, author, entry.id)).status === 404)).toBe(true);
    const again = await server.request<MemoryEntry>("/memory", { as: author, body: { content } });
    expect(again.status).toBe(201);
    expect(again.body.id).not.toBe(entry.id);
  });
});

describe("the expiry sweeper", () => {
  const it = test.extend("author", ({ server }) => server.agent("swept-author"));
  it.override("serverOptions", { sweepIntervalMs: 200 });

  it("soft-deletes an expired entry and emits memory.deleted with reason expired", async ({ server, author }) => {
    const since = new Date(Date.now() - 1000).toISOString();
    const entry = await write(server, author, { content: "Short-lived entry", expires_at: new Date(Date.now() + 1500).toISOString() });
    const swept = await eventually(async () => (await eventsAbout(server, "memory.deleted", entry.id)).length > 0);
    expect(swept).toBe(true);
    const events = await eventsAbout(server, "memory.deleted", entry.id);
    expect(events).toHaveLength(1);
    expect(events[0]?.payload).toMatchObject({ memory_id: entry.id, reason: "expired" });
    expect((await read(server, author, entry.id)).status).toBe(404);
    const response = await server.request<Record<string, unknown>[]>(`/memory/delta?since=${since}&limit=500`, { as: author });
    const tombstone = response.body.find((item) => item.id === entry.id);
    expect(Object.keys(tombstone ?? {}).sort()).toEqual(["deleted_at", "id", "updated_at", "version"]);
  });

  it("leaves entries that have not expired alone", async ({ server, author }) => {
    const entry = await write(server, author, { content: "Long-lived entry", expires_at: new Date(Date.now() + 3600_000).toISOString() });
    const other = await write(server, author, { content: "Sweep marker", expires_at: new Date(Date.now() + 600).toISOString() });
    expect(await eventually(async () => (await eventsAbout(server, "memory.deleted", other.id)).length > 0)).toBe(true);
    expect((await read(server, author, entry.id)).status).toBe(200);
    expect(await eventsAbout(server, "memory.deleted", entry.id)).toEqual([]);
  });
});
