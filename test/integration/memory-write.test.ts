import { describe, expect } from "vitest";
import { BUNDLED_MODEL_ID } from "../../src/embed/models.js";
import { it, test } from "../helpers/fixtures.js";
import { createProject, eventsOf, list, type MemoryEntry } from "../helpers/memory.js";
import { RFC3339_MS, type Credentials, type ErrorBody, type TestServer } from "../helpers/server.js";

/** POST /memory, black box: defaults, duplicate detection, directive permission, limits (CONTRACT §3). */

type WriteResult = MemoryEntry & {
  similar?: { id: string; similarity: number; agent_id: string }[];
  duplicate_of?: string;
  similarity?: number;
};

const DIRECTIVE_DENIED = "directive writes require elevated permission";

/** Posts `body` as it is (duplicates included) and returns the whole response, whatever its status. */
const write = (server: TestServer, as: Credentials, body: Record<string, unknown>) =>
  server.request<WriteResult>("/memory", { as, body });

describe("writing a memory entry", () => {
  const it = test
    .extend("writer", ({ server }) => server.agent("writer"))
    .extend("other", ({ server }) => server.agent("other-writer"));

  it("answers 201 with the stored entry and a similar list", async ({ server, writer }) => {
    const response = await write(server, writer, { content: "The staging database is reset every night at 02:00 UTC" });
    expect(response.status).toBe(201);
    expect(response.body.id).toMatch(/^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/);
    expect(response.body.content).toBe("The staging database is reset every night at 02:00 UTC");
    expect(response.body.agent_id).toBe("writer");
    expect(response.body.version).toBe(1);
    expect(Array.isArray(response.body.similar)).toBe(true);
    expect(response.body).not.toHaveProperty("duplicate_of");
    expect(response.body).not.toHaveProperty("embedding");
    expect(response.body.created_at).toMatch(RFC3339_MS);
    expect(response.body.updated_at).toBe(response.body.created_at);

    const read = await server.request<MemoryEntry>(`/memory/${response.body.id}`, { as: writer });
    expect(read.status).toBe(200);
    expect(read.body.content).toBe(response.body.content);
  });

  it("defaults type to memory, scope to project, confidence to 1 and project to global", async ({ server, writer }) => {
    const response = await write(server, writer, { content: "Defaults check: the queue worker retries three times" });
    expect(response.status).toBe(201);
    expect(response.body).toMatchObject({
      type: "memory",
      scope: "project",
      confidence: 1,
      project: null,
      tags: [],
      parents: [],
      headline: null,
      expires_at: null,
      read_count: 0,
      distinct_readers: 0,
      reinforcement_count: 0,
      last_reinforced_at: null,
      superseded_by: null,
    });
  });

  it("trims and de-duplicates tags", async ({ server, writer }) => {
    const response = await write(server, writer, { content: "Tags are normalised on write", tags: [" infra ", "infra", "ci"] });
    expect(response.status).toBe(201);
    expect(response.body.tags).toEqual(["infra", "ci"]);
  });

  it("rejects content that is empty after trimming with 422", async ({ server, writer }) => {
    const response = await server.request<ErrorBody>("/memory", { as: writer, body: { content: "  \n\t " } });
    expect(response.status).toBe(422);
    expect(response.body.code).toBe("VALIDATION_FAILED");
  });

  it("rejects unknown fields, out-of-range confidence and type compiled with 422", async ({ server, writer }) => {
    const unknown = await server.request<ErrorBody>("/memory", { as: writer, body: { content: "x unknown", colour: "red" } });
    expect(unknown.status).toBe(422);
    const confidence = await server.request<ErrorBody>("/memory", { as: writer, body: { content: "x confidence", confidence: 1.5 } });
    expect(confidence.status).toBe(422);
    expect(confidence.body.errors?.map((error) => error.path)).toContain("confidence");
    const compiled = await server.request<ErrorBody>("/memory", { as: writer, body: { content: "x compiled", type: "compiled" } });
    expect(compiled.status).toBe(422);
  });

  it("accepts visible parents and rejects an unknown parent with 422", async ({ server, writer }) => {
    const parent = await write(server, writer, { content: "Parent entry for provenance" });
    const child = await write(server, writer, { content: "Child entry derived from the parent", parents: [parent.body.id] });
    expect(child.status).toBe(201);
    expect(child.body.parents).toEqual([parent.body.id]);
    const orphan = await server.request<ErrorBody>("/memory", {
      as: writer,
      body: { content: "Child of nothing", parents: ["00000000-0000-4000-8000-000000000000"] },
    });
    expect(orphan.status).toBe(422);
  });

  it("emits memory.written for a new entry", async ({ server, writer }) => {
    const response = await write(server, writer, { content: "Event check: memory.written carries the id" });
    const events = await eventsOf(server, "memory.written");
    const event = events.find((candidate) => candidate.payload.memory_id === response.body.id);
    expect(event).toMatchObject({
      type: "memory.written",
      agent_id: "writer",
      payload: { memory_id: response.body.id, type: "memory", project: null, scope: "project", version: 1 },
    });
  });

  it("answers a duplicate write with 200, duplicate_of, similarity and the reinforced entry, writing nothing new", async ({ server, writer }) => {
    const content = "Duplicate rule: the cache TTL is 300 seconds";
    const first = await write(server, writer, { content, confidence: 0.5 });
    expect(first.status).toBe(201);
    const again = await write(server, writer, { content });
    expect(again.status).toBe(200);
    expect(again.body.duplicate_of).toBe(first.body.id);
    expect(again.body.id).toBe(first.body.id);
    expect(again.body.similarity).toBeCloseTo(1, 5);
    expect(again.body.confidence).toBeCloseTo(0.6, 6);
    expect(again.body.reinforcement_count).toBe(1);
    expect(again.body.last_reinforced_at).not.toBeNull();
    expect(again.body).not.toHaveProperty("similar");

    const stored = await server.request<MemoryEntry>(`/memory/${first.body.id}`, { as: writer });
    expect(stored.body.confidence).toBeCloseTo(0.6, 6);
    expect(stored.body.reinforcement_count).toBe(1);
    const listed = (await list(server, writer, "agent=writer")).filter((entry) => entry.content === content);
    expect(listed).toHaveLength(1);
  });

  it("raises confidence by 0.2·(1−c) on each further duplicate", async ({ server, writer }) => {
    const content = "Reinforcement rule: retries back off exponentially";
    await write(server, writer, { content, confidence: 0.5 });
    await write(server, writer, { content });
    const third = await write(server, writer, { content });
    expect(third.status).toBe(200);
    expect(third.body.confidence).toBeCloseTo(0.68, 6);
    expect(third.body.reinforcement_count).toBe(2);
  });

  it("treats content differing only in case and white space as a duplicate", async ({ server, writer }) => {
    const first = await write(server, writer, { content: "The build artefacts live in the releases bucket" });
    const again = await write(server, writer, { content: "  the BUILD   artefacts live\n in the Releases bucket  " });
    expect(again.status).toBe(200);
    expect(again.body.duplicate_of).toBe(first.body.id);
    expect(again.body.content).toBe("The build artefacts live in the releases bucket");
  });

  it("treats another agent's identical project entry as a duplicate it reinforces", async ({ server, writer, other }) => {
    const first = await write(server, writer, { content: "Shared fact: the API gateway times out after 30 s" });
    const again = await write(server, other, { content: "Shared fact: the API gateway times out after 30 s" });
    expect(again.status).toBe(200);
    expect(again.body.duplicate_of).toBe(first.body.id);
    expect(again.body.agent_id).toBe("writer");
  });

  it("stores one entry when identical writes race, reinforcing it once per losing write", async ({ server, writer }) => {
    const content = "Race rule: only one of these concurrent writes is stored";
    const responses = await Promise.all(Array.from({ length: 5 }, () => write(server, writer, { content, confidence: 0.5 })));
    const created = responses.filter((response) => response.status === 201);
    expect(created).toHaveLength(1);
    const id = created[0]?.body.id;
    expect(responses.filter((response) => response.status === 200).every((response) => response.body.duplicate_of === id)).toBe(true);
    const listed = (await list(server, writer, "agent=writer")).filter((entry) => entry.content === content);
    expect(listed).toHaveLength(1);
    // 0.5 reinforced four times: 0.6, 0.68, 0.744, 0.7952.
    expect(listed[0]).toMatchObject({ reinforcement_count: 4 });
    expect(listed[0]?.confidence).toBeCloseTo(0.7952, 6);
  });

  it("stores one entry when near-identical writes race, each loser reinforcing the one stored", async ({ server, writer }) => {
    // The same words with other punctuation: other content keys, the same meaning (cosine 1), so
    // only the check by meaning can tell they are one fact, and it scans before the transactions.
    const variants = ["Near race: one of these is kept.", "Near race, one of these is kept!", "near race - one of these is kept?", "Near race; one of these is kept", "NEAR RACE: one of these is kept..."];
    const responses = await Promise.all(variants.map((content) => write(server, writer, { content, confidence: 0.5 })));
    const created = responses.filter((response) => response.status === 201);
    expect(created).toHaveLength(1);
    const id = created[0]?.body.id;
    const reinforcing = responses.filter((response) => response.status === 200);
    expect(reinforcing).toHaveLength(4);
    expect(reinforcing.every((response) => response.body.duplicate_of === id)).toBe(true);
    const listed = (await list(server, writer, "agent=writer")).filter((entry) => /near race/i.test(entry.content));
    expect(listed).toHaveLength(1);
    expect(listed[0]).toMatchObject({ id, reinforcement_count: 4 });
  });

  it("writes a new entry with 201 when allow_duplicate is true", async ({ server, writer }) => {
    const content = "Allow duplicate: two copies are wanted here";
    const first = await write(server, writer, { content });
    const second = await write(server, writer, { content, allow_duplicate: true });
    expect(second.status).toBe(201);
    expect(second.body.id).not.toBe(first.body.id);
    expect(second.body).not.toHaveProperty("duplicate_of");
    const listed = (await list(server, writer, "agent=writer")).filter((entry) => entry.content === content);
    expect(listed).toHaveLength(2);
  });

  it("does not treat the same content of another type as a duplicate", async ({ server, writer }) => {
    const content = "Type boundary: the same words as a doc";
    const memory = await write(server, writer, { content });
    const doc = await write(server, writer, { content, type: "doc" });
    expect(doc.status).toBe(201);
    expect(doc.body.id).not.toBe(memory.body.id);
    expect(doc.body.type).toBe("doc");
  });

  it("does not treat the same content in another scope as a duplicate", async ({ server, writer }) => {
    const content = "Scope boundary: the same words kept private";
    const shared = await write(server, writer, { content });
    const personal = await write(server, writer, { content, scope: "agent" });
    expect(personal.status).toBe(201);
    expect(personal.body.id).not.toBe(shared.body.id);
    expect(personal.body.scope).toBe("agent");
  });

  it("does not treat another agent's private entry with the same content as a duplicate", async ({ server, writer, other }) => {
    const content = "Author boundary: my own private note";
    const mine = await write(server, writer, { content, scope: "agent" });
    const theirs = await write(server, other, { content, scope: "agent" });
    expect(theirs.status).toBe(201);
    expect(theirs.body.id).not.toBe(mine.body.id);
    expect(theirs.body.agent_id).toBe("other-writer");
  });

  it("does not treat the same content in another project as a duplicate", async ({ server }) => {
    const content = "Project boundary: the same words in two projects";
    await createProject(server, server.owner, "alpha");
    await createProject(server, server.owner, "beta");
    const global = await write(server, server.owner, { content, project: null });
    const inAlpha = await write(server, server.owner, { content, project: "alpha" });
    const inBeta = await write(server, server.owner, { content, project: "beta" });
    expect(inAlpha.status).toBe(201);
    expect(inBeta.status).toBe(201);
    expect(new Set([global.body.id, inAlpha.body.id, inBeta.body.id]).size).toBe(3);
    const againInAlpha = await write(server, server.owner, { content, project: "alpha" });
    expect(againInAlpha.status).toBe(200);
    expect(againInAlpha.body.duplicate_of).toBe(inAlpha.body.id);
  });

  it("does not treat a deleted entry as a duplicate", async ({ server, writer }) => {
    const content = "Deleted boundary: written, deleted, written again";
    const first = await write(server, writer, { content });
    expect((await server.request(`/memory/${first.body.id}`, { as: writer, method: "DELETE" })).status).toBe(204);
    const again = await write(server, writer, { content });
    expect(again.status).toBe(201);
    expect(again.body.id).not.toBe(first.body.id);
  });

  it("rejects a write into a project the agent is not a member of with 403, whether or not it exists", async ({ server, writer, other }) => {
    await createProject(server, other, "p1");
    for (const project of ["p1", "no-such-project"]) {
      const response = await server.request<ErrorBody>("/memory", { as: writer, body: { content: "Not my project", project } });
      expect(response.status).toBe(403);
      expect(response.body).toMatchObject({ code: "FORBIDDEN", detail: "not a member of this project" });
    }
  });

  it("lets the owner and archivist roles write into a project they have not joined, but not into one that does not exist", async ({ server, other }) => {
    await createProject(server, other, "p1");
    await createProject(server, other, "p2");
    const byOwner = await write(server, server.owner, { content: "Owner writes into p1", project: "p1" });
    expect(byOwner.status).toBe(201);
    expect(byOwner.body.project).toBe("p1");
    const byArchivist = await write(server, server.archivist, { content: "Archivist writes into p2", project: "p2" });
    expect(byArchivist.status).toBe(201);
    expect(byArchivist.body.project).toBe("p2");
    for (const as of [server.owner, server.archivist]) {
      const missing = await server.request<ErrorBody>("/memory", { as, body: { content: "Nowhere", project: "no-such-project" } });
      expect(missing.status).toBe(404);
      expect(missing.body.code).toBe("NOT_FOUND");
    }
  });

  it("rejects a write without credentials with 401", async ({ server }) => {
    const response = await server.request<ErrorBody>("/memory", { body: { content: "anonymous" } });
    expect(response.status).toBe(401);
    expect(response.body.code).toBe("UNAUTHENTICATED");
  });
});

describe("writing directives with the default DIRECTIVE_WRITERS", () => {
  const it = test.extend("agent", ({ server }) => server.agent("plain-agent"));

  it("refuses a directive from an agent outside DIRECTIVE_WRITERS with 403 and the exact detail", async ({ server, agent }) => {
    const response = await server.request<ErrorBody>("/memory", { as: agent, body: { content: "Always use tabs", type: "directive" } });
    expect(response.status).toBe(403);
    expect(response.body).toEqual({ detail: DIRECTIVE_DENIED, code: "FORBIDDEN" });
    expect(await list(server, server.owner, "type=directive")).toEqual([]);
  });

  it("never lets the archivist write a directive", async ({ server }) => {
    const response = await server.request<ErrorBody>("/memory", {
      as: server.archivist,
      body: { content: "Archivist directive attempt", type: "directive" },
    });
    expect(response.status).toBe(403);
    expect(response.body).toEqual({ detail: DIRECTIVE_DENIED, code: "FORBIDDEN" });
  });

  it("stores the owner's directive with 201 and confidence forced to 1.0", async ({ server }) => {
    const response = await write(server, server.owner, { content: "Prefer small pull requests", type: "directive", confidence: 0.3 });
    expect(response.status).toBe(201);
    expect(response.body.type).toBe("directive");
    expect(response.body.confidence).toBe(1);
    const read = await server.request<MemoryEntry>(`/memory/${response.body.id}`, { as: server.owner });
    expect(read.body.confidence).toBe(1);
  });

  it("emits memory.written for a directive", async ({ server }) => {
    const response = await write(server, server.owner, { content: "Directive event check", type: "directive" });
    const events = await eventsOf(server, "memory.written");
    expect(events.find((event) => event.payload.memory_id === response.body.id)?.payload.type).toBe("directive");
  });

  it("keeps a directive's confidence at 1 when a duplicate reinforces it", async ({ server }) => {
    const first = await write(server, server.owner, { content: "Never force-push to main", type: "directive" });
    const again = await write(server, server.owner, { content: "never force-push to MAIN", type: "directive" });
    expect(again.status).toBe(200);
    expect(again.body.duplicate_of).toBe(first.body.id);
    expect(again.body.confidence).toBe(1);
    // Only an explicit PATCH moves a directive's version.
    expect(again.body.version).toBe(first.body.version);
  });
});

describe("writing directives with DIRECTIVE_WRITERS=human,alice", () => {
  it.override("serverEnv", { DIRECTIVE_WRITERS: "human,alice" });

  it("lets a listed agent write a directive", async ({ server }) => {
    const alice = await server.agent("alice");
    const response = await write(server, alice, { content: "Alice's directive: document every endpoint", type: "directive" });
    expect(response.status).toBe(201);
    expect(response.body).toMatchObject({ type: "directive", agent_id: "alice", confidence: 1 });
  });

  it("still refuses an agent that is not listed", async ({ server }) => {
    const bob = await server.agent("bob");
    const response = await server.request<ErrorBody>("/memory", { as: bob, body: { content: "Bob's directive", type: "directive" } });
    expect(response.status).toBe(403);
    expect(response.body.detail).toBe(DIRECTIVE_DENIED);
  });

  it("still lets the owner write a directive", async ({ server }) => {
    const response = await write(server, server.owner, { content: "Owner directive beside alice", type: "directive" });
    expect(response.status).toBe(201);
  });
});

describe("write limits", () => {
  const it = test.extend("agent", ({ server }) => server.agent("limits"));
  it.override("serverEnv", { MAX_CONTENT_BYTES: "1000" });

  it("accepts content of exactly MAX_CONTENT_BYTES bytes", async ({ server, agent }) => {
    const response = await write(server, agent, { content: "a".repeat(1000) });
    expect(response.status).toBe(201);
  });

  it("rejects content over MAX_CONTENT_BYTES with 413", async ({ server, agent }) => {
    const response = await server.request<ErrorBody>("/memory", { as: agent, body: { content: "b".repeat(1001) } });
    expect(response.status).toBe(413);
    expect(response.body.code).toBe("PAYLOAD_TOO_LARGE");
  });

  it("counts content size in UTF-8 bytes, not characters", async ({ server, agent }) => {
    expect((await write(server, agent, { content: "é".repeat(500) })).status).toBe(201);
    expect((await write(server, agent, { content: "ü".repeat(501) })).status).toBe(413);
  });

  it("rejects a PATCH whose content is over MAX_CONTENT_BYTES with 413 and keeps the entry", async ({ server, agent }) => {
    const entry = await write(server, agent, { content: "Short content to be grown" });
    const patch = await server.request<ErrorBody>(`/memory/${entry.body.id}`, {
      as: agent,
      method: "PATCH",
      body: { content: "c".repeat(1001) },
    });
    expect(patch.status).toBe(413);
    const read = await server.request<MemoryEntry>(`/memory/${entry.body.id}`, { as: agent });
    expect(read.body).toMatchObject({ content: "Short content to be grown", version: 1 });
  });

  it("accepts 32 tags and rejects 33 with 422", async ({ server, agent }) => {
    const tags = Array.from({ length: 33 }, (_, index) => `tag-${index}`);
    expect((await write(server, agent, { content: "thirty-two tags", tags: tags.slice(0, 32) })).status).toBe(201);
    const tooMany = await server.request<ErrorBody>("/memory", { as: agent, body: { content: "thirty-three tags", tags } });
    expect(tooMany.status).toBe(422);
    expect(tooMany.body.code).toBe("VALIDATION_FAILED");
    expect(tooMany.body.errors?.some((error) => error.path.startsWith("tags"))).toBe(true);
  });

  it("accepts a tag of 64 characters and rejects one of 65 with 422", async ({ server, agent }) => {
    expect((await write(server, agent, { content: "long tag ok", tags: ["t".repeat(64)] })).status).toBe(201);
    const tooLong = await server.request<ErrorBody>("/memory", { as: agent, body: { content: "long tag too long", tags: ["t".repeat(65)] } });
    expect(tooLong.status).toBe(422);
    expect(tooLong.body.errors?.some((error) => error.path.startsWith("tags.0"))).toBe(true);
  });

  it("rejects an empty tag with 422", async ({ server, agent }) => {
    const response = await server.request<ErrorBody>("/memory", { as: agent, body: { content: "empty tag", tags: ["  "] } });
    expect(response.status).toBe(422);
  });
});

describe("duplicate and similar detection by meaning (use-lite model)", () => {
  const it = test.extend("agent", ({ server }) => server.agent("semantic"));
  it.override("serverEnv", { EMBEDDING_MODEL: "use-lite" });

  // Cosines measured with the bundled (int8) model (defaults: DUPLICATE_THRESHOLD 0.95, SIMILAR_THRESHOLD 0.75):
  // "Deploys run …every Friday" vs "Deployments run …every Friday" 0.966, vs "Deploys happen …each Friday"
  // 0.917; football match/game 0.891; football/soccer league schedule 0.952; "Run the database
  // migrations…" is at 0.84–0.90 to four of the migration sentences. The fp32 model it replaced was
  // within 0.004 of each, on the same side of every threshold.

  it("reinforces a paraphrase only when its cosine is at or above DUPLICATE_THRESHOLD", async ({ server, agent }) => {
    const first = await write(server, agent, { content: "Deploys run from the main branch every Friday", confidence: 0.5 });
    expect(first.status).toBe(201);
    expect(first.body.embedding_model).toBe(BUNDLED_MODEL_ID);

    const above = await write(server, agent, { content: "Deployments run from the main branch every Friday" });
    expect(above.status).toBe(200);
    expect(above.body.duplicate_of).toBe(first.body.id);
    expect(above.body.similarity).toBeGreaterThanOrEqual(0.95);
    expect(above.body.similarity).toBeLessThan(1);
    expect(above.body.confidence).toBeCloseTo(0.6, 6);
    expect(above.body.content).toBe("Deploys run from the main branch every Friday");

    const below = await write(server, agent, { content: "Deploys happen from the main branch each Friday" });
    expect(below.status).toBe(201);
    expect(below.body.id).not.toBe(first.body.id);
    const similar = below.body.similar?.find((candidate) => candidate.id === first.body.id);
    expect(similar?.similarity).toBeGreaterThanOrEqual(0.75);
    expect(similar?.similarity).toBeLessThan(0.95);
  });

  it("writes a paraphrase below DUPLICATE_THRESHOLD as a new entry that lists the original as similar", async ({ server, agent }) => {
    const original = await write(server, agent, { content: "The football match ended in a draw" });
    expect(original.status).toBe(201);
    const paraphrase = await write(server, agent, { content: "The football game ended in a draw" });
    expect(paraphrase.status).toBe(201);
    const similar = paraphrase.body.similar?.find((candidate) => candidate.id === original.body.id);
    expect(similar).toBeDefined();
    expect(similar?.agent_id).toBe("semantic");
    expect(similar?.similarity).toBeGreaterThanOrEqual(0.75);
    expect(similar?.similarity).toBeLessThan(0.95);
  });

  it("does not list a paraphrase below SIMILAR_THRESHOLD (football match vs soccer game, cosine 0.74)", async ({ server, agent }) => {
    const football = await write(server, agent, { content: "The football match ended in a draw" });
    const soccer = await write(server, agent, { content: "The soccer game finished tied" });
    expect(soccer.status).toBe(201);
    expect((soccer.body.similar ?? []).map((candidate) => candidate.id)).not.toContain(football.body.id);
  });

  it("lists at most 3 similar entries and never an unrelated one", async ({ server, agent }) => {
    for (const content of [
      "The database migrations must be run before starting the server",
      "Database migrations have to run before the server starts",
      "Apply the schema migrations prior to launching the server",
      "Migrations of the database should be executed before the server is started",
    ]) {
      await write(server, agent, { content, allow_duplicate: true });
    }
    const unrelated = await write(server, agent, { content: "I like bananas with my breakfast cereal" });
    const paraphrase = await write(server, agent, { content: "Run the database migrations before starting the server", allow_duplicate: true });
    expect(paraphrase.status).toBe(201);
    const similar = paraphrase.body.similar ?? [];
    expect(similar.length).toBeGreaterThan(0);
    expect(similar.length).toBeLessThanOrEqual(3);
    expect(similar.every((candidate) => candidate.similarity >= 0.75)).toBe(true);
    expect(similar.map((candidate) => candidate.id)).not.toContain(unrelated.body.id);
  });

  it("does not list another agent's private entry as similar", async ({ server, agent }) => {
    const stranger = await server.agent("semantic-stranger");
    const hidden = await write(server, stranger, { content: "The soccer league schedule is published on Mondays", scope: "agent" });
    const mine = await write(server, agent, { content: "The football league schedule is published on Mondays" });
    expect(mine.status).toBe(201);
    expect(mine.body.duplicate_of).toBeUndefined();
    expect((mine.body.similar ?? []).map((candidate) => candidate.id)).not.toContain(hidden.body.id);
  });

  it("treats a near-identical text with different numbers as a new fact, listed as similar", async ({ server, agent }) => {
    const first = await write(server, agent, { content: "The staging API listens on port 8080" });
    expect(first.status).toBe(201);
    const changed = await write(server, agent, { content: "The staging API listens on port 8081" });
    expect(changed.status).toBe(201);
    expect(changed.body.duplicate_of).toBeUndefined();
    const similar = changed.body.similar?.find((candidate) => candidate.id === first.body.id);
    // Above DUPLICATE_THRESHOLD (0.958 measured): only the differing number keeps it apart.
    expect(similar?.similarity).toBeGreaterThanOrEqual(0.95);
  });
});
