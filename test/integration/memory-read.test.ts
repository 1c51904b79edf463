import { beforeAll, describe, expect } from "vitest";
import type { Tombstone } from "../../src/wire/memory.js";
import { it, test } from "../helpers/fixtures.js";
import { createProject, ids, list, patch, searchHits, UNKNOWN_ID, write, type MemoryEntry } from "../helpers/memory.js";
import type { Credentials, ErrorBody, Response, TestServer } from "../helpers/server.js";
import { agentForSuite, serverForSuite } from "../helpers/suite.js";
import { afterMillisecond } from "../helpers/wait.js";

/** Reading memory, black box: get, visibility, list filters, directives, delta, headline (CONTRACT §2.3, §3). */

async function delta(server: TestServer, as: Credentials, query: string): Promise<(MemoryEntry | Tombstone)[]> {
  const response = await server.request<(MemoryEntry | Tombstone)[]>(`/memory/delta?limit=500&${query}`, { as });
  expect(response.status).toBe(200);
  return response.body;
}

const EPOCH = "since=2000-01-01T00:00:00.000Z";

describe("reading one entry", () => {
  const it = test
    .extend("author", ({ server }) => server.agent("author"))
    .extend("reader", ({ server }) => server.agent("reader"))
    .extend("secondReader", ({ server }) => server.agent("second-reader"));

  it("returns the entry with ETag set to its quoted version", async ({ server, author, reader }) => {
    const entry = await write(server, author, { content: "ETag check entry" });
    const response = await server.request<MemoryEntry>(`/memory/${entry.id}`, { as: reader });
    expect(response.status).toBe(200);
    expect(response.headers.get("etag")).toBe('"1"');
    expect(response.body).toMatchObject({ id: entry.id, content: "ETag check entry", version: 1 });
    expect(response.body).not.toHaveProperty("embedding");
    expect(response.body).not.toHaveProperty("deleted_at");
  });

  it("counts each read by another agent in read_count and each such agent once in distinct_readers", async ({ server, author, reader, secondReader }) => {
    const entry = await write(server, author, { content: "Read counting entry" });
    const first = await server.request<MemoryEntry>(`/memory/${entry.id}`, { as: reader });
    expect(first.body).toMatchObject({ read_count: 1, distinct_readers: 1 });
    const second = await server.request<MemoryEntry>(`/memory/${entry.id}`, { as: reader });
    expect(second.body).toMatchObject({ read_count: 2, distinct_readers: 1 });
    const third = await server.request<MemoryEntry>(`/memory/${entry.id}`, { as: secondReader });
    expect(third.body).toMatchObject({ read_count: 3, distinct_readers: 2 });
  });

  it("does not count reads by the author or the archivist", async ({ server, author }) => {
    const entry = await write(server, author, { content: "Uncounted reads entry" });
    await server.request(`/memory/${entry.id}`, { as: author });
    await server.request(`/memory/${entry.id}`, { as: server.archivist });
    const byAuthor = await server.request<MemoryEntry>(`/memory/${entry.id}`, { as: author });
    expect(byAuthor.body).toMatchObject({ read_count: 0, distinct_readers: 0 });
  });

  it("counts a read by the owner role like any other agent's", async ({ server, author }) => {
    const entry = await write(server, author, { content: "Owner read entry" });
    await server.request(`/memory/${entry.id}`, { as: server.owner });
    const byAuthor = await server.request<MemoryEntry>(`/memory/${entry.id}`, { as: author });
    expect(byAuthor.body).toMatchObject({ read_count: 1, distinct_readers: 1 });
  });

  it("does not change version or updated_at when an entry is read", async ({ server, author, reader }) => {
    const entry = await write(server, author, { content: "Reads leave versions alone" });
    await server.request(`/memory/${entry.id}`, { as: reader });
    const after = await server.request<MemoryEntry>(`/memory/${entry.id}`, { as: author });
    expect(after.body.version).toBe(1);
    expect(after.body.updated_at).toBe(entry.updated_at);
  });

  it("accepts a unique id prefix of 6 or more hex characters", async ({ server, author }) => {
    const entry = await write(server, author, { content: "Prefix lookup entry" });
    for (const prefix of [entry.id.slice(0, 6), entry.id.slice(0, 8), entry.id.slice(0, 13), entry.id.toUpperCase()]) {
      const response = await server.request<MemoryEntry>(`/memory/${prefix}`, { as: author });
      expect(response.status, prefix).toBe(200);
      expect(response.body.id).toBe(entry.id);
    }
  });

  it("rejects an id prefix shorter than 6 characters with 422", async ({ server, author }) => {
    const entry = await write(server, author, { content: "Short prefix entry" });
    const response = await server.request<ErrorBody>(`/memory/${entry.id.slice(0, 5)}`, { as: author });
    expect(response.status).toBe(422);
    expect(response.body.code).toBe("VALIDATION_FAILED");
  });

  it("answers 404 for an unknown id", async ({ server, author }) => {
    const response = await server.request<ErrorBody>(`/memory/${UNKNOWN_ID}`, { as: author });
    expect(response.status).toBe(404);
    expect(response.body.code).toBe("NOT_FOUND");
    expect(response.body.detail).toMatch(/^[a-z]/);
  });

  it("adds the embedding as an array of numbers with include_embedding=true", async ({ server, author }) => {
    const entry = await write(server, author, { content: "Embedding on read" });
    const response = await server.request<MemoryEntry>(`/memory/${entry.id}?include_embedding=true`, { as: author });
    expect(response.status).toBe(200);
    expect(Array.isArray(response.body.embedding)).toBe(true);
    expect(response.body.embedding?.length).toBeGreaterThan(0);
    expect(response.body.embedding?.every((value) => typeof value === "number")).toBe(true);
  });
});

describe("visibility of private (scope=agent) entries", () => {
  const server = serverForSuite();
  const alice = agentForSuite(server, "alice");
  const bob = agentForSuite(server, "bob");
  let secret: MemoryEntry;
  beforeAll(async () => {
    secret = await write(server, alice, { content: "Alice private zanzibar note", scope: "agent" });
  });

  it("answers another agent's GET with 404 and the same body as an unknown id", async () => {
    const hidden = await server.request<ErrorBody>(`/memory/${secret.id}`, { as: bob });
    const unknown = await server.request<ErrorBody>(`/memory/${UNKNOWN_ID}`, { as: bob });
    expect(hidden.status).toBe(404);
    expect(hidden.body).toEqual(unknown.body);
    const byPrefix = await server.request<ErrorBody>(`/memory/${secret.id.slice(0, 8)}`, { as: bob });
    expect(byPrefix.status).toBe(404);
  });

  it("hides it from the owner and archivist roles too", async () => {
    for (const viewer of [server.owner, server.archivist]) {
      const response = await server.request<ErrorBody>(`/memory/${secret.id}`, { as: viewer });
      expect(response.status).toBe(404);
    }
  });

  it("leaves it out of another agent's, the owner's and the archivist's list, search and delta", async () => {
    for (const viewer of [bob, server.owner, server.archivist]) {
      expect(ids(await list(server, viewer))).not.toContain(secret.id);
      expect(ids(await list(server, viewer, "agent=alice&scope=agent"))).toEqual([]);
      expect(ids(await searchHits(server, viewer, "zanzibar"))).not.toContain(secret.id);
      expect(ids(await delta(server, viewer, EPOCH))).not.toContain(secret.id);
    }
  });

  it("keeps its events from everyone but the author", async () => {
    const about = async (viewer: Credentials): Promise<unknown[]> => {
      const response = await server.request<{ payload: { memory_id?: string } }[]>("/events?since=seq:0&limit=500&type=memory.*", { as: viewer });
      expect(response.status).toBe(200);
      return response.body.filter((event) => event.payload.memory_id === secret.id);
    };
    for (const viewer of [bob, server.owner, server.archivist]) expect(await about(viewer)).toEqual([]);
    expect(await about(alice)).toHaveLength(1);
  });

  it("shows it to its author in get, list, search and delta", async () => {
    expect((await server.request(`/memory/${secret.id}`, { as: alice })).status).toBe(200);
    expect(ids(await list(server, alice, "scope=agent"))).toEqual([secret.id]);
    expect(ids(await searchHits(server, alice, "zanzibar"))).toContain(secret.id);
    expect(ids(await delta(server, alice, EPOCH))).toContain(secret.id);
  });

  it("shows a global project-scoped entry to everyone", async () => {
    const shared = await write(server, alice, { content: "Alice shared zanzibar fact" });
    for (const viewer of [bob, server.owner, server.archivist]) {
      expect((await server.request(`/memory/${shared.id}`, { as: viewer })).status).toBe(200);
      expect(ids(await searchHits(server, viewer, "zanzibar"))).toContain(shared.id);
    }
  });
});

describe("visibility of project entries", () => {
  const server = serverForSuite();
  const outsider = agentForSuite(server, "outsider");
  let inP1: MemoryEntry;
  beforeAll(async () => {
    await createProject(server, server.owner, "p1");
    inP1 = await write(server, server.owner, { content: "Project p1 quokka entry", project: "p1" });
  });

  it("refuses a write into a project by an agent that is not a member with 403", async () => {
    const response = await server.request<ErrorBody>("/memory", { as: outsider, body: { content: "sneaking in", project: "p1" } });
    expect(response.status).toBe(403);
    expect(response.body).toEqual({ detail: "not a member of this project", code: "FORBIDDEN" });
  });

  it("hides a project's entries from an agent that is not a member", async () => {
    const response = await server.request<ErrorBody>(`/memory/${inP1.id}`, { as: outsider });
    expect(response.status).toBe(404);
    expect(response.body).toEqual((await server.request(`/memory/${UNKNOWN_ID}`, { as: outsider })).body);
    expect(ids(await list(server, outsider))).not.toContain(inP1.id);
    expect(await list(server, outsider, "project=p1")).toEqual([]);
    expect(ids(await searchHits(server, outsider, "quokka"))).not.toContain(inP1.id);
    expect(ids(await delta(server, outsider, EPOCH))).not.toContain(inP1.id);
  });

  it("shows every project's entries to the owner and archivist roles", async () => {
    for (const viewer of [server.owner, server.archivist]) {
      expect((await server.request(`/memory/${inP1.id}`, { as: viewer })).status).toBe(200);
      expect(ids(await list(server, viewer, "project=p1"))).toEqual([inP1.id]);
      expect(ids(await searchHits(server, viewer, "quokka"))).toContain(inP1.id);
      expect(ids(await delta(server, viewer, EPOCH))).toContain(inP1.id);
    }
  });
});

describe("listing entries", () => {
  const server = serverForSuite();
  const alice = agentForSuite(server, "alice");
  const bob = agentForSuite(server, "bob");
  let first: MemoryEntry;
  let second: MemoryEntry;
  let third: MemoryEntry;
  let inProject: MemoryEntry;
  let bobsPrivate: MemoryEntry;
  let secondPatched: MemoryEntry;
  beforeAll(async () => {
    first = await write(server, alice, { content: "List entry one", tags: ["deploy"], confidence: 0.4 });
    await afterMillisecond(first.updated_at);
    second = await write(server, alice, { content: "List entry two", type: "doc", tags: ["deploy", "infra"], confidence: 0.9 });
    await afterMillisecond(second.updated_at);
    third = await write(server, bob, { content: "List entry three", tags: ["infra"], confidence: 0.7 });
    await afterMillisecond(third.updated_at);
    await createProject(server, server.owner, "p1");
    inProject = await write(server, server.owner, { content: "List entry four in p1", project: "p1" });
    await afterMillisecond(inProject.updated_at);
    bobsPrivate = await write(server, bob, { content: "List entry five, private", scope: "agent" });
    await afterMillisecond(bobsPrivate.updated_at);
    await server.request(`/memory/${third.id}`, { as: alice });
    const patched = await patch(server, alice, second.id, { content: "List entry two, revised" });
    secondPatched = patched.body;
  });

  it("lists visible entries newest updated_at first", async () => {
    expect(ids(await list(server, alice))).toEqual([second.id, third.id, first.id]);
    expect(ids(await list(server, server.owner))).toEqual([second.id, inProject.id, third.id, first.id]);
    expect(ids(await list(server, bob))).toEqual([second.id, bobsPrivate.id, third.id, first.id]);
  });

  it("filters by type", async () => {
    expect(ids(await list(server, alice, "type=doc"))).toEqual([second.id]);
    expect(ids(await list(server, alice, "type=memory"))).toEqual([third.id, first.id]);
  });

  it("rejects an unknown type with 422", async () => {
    const response = await server.request<ErrorBody>("/memory?type=note", { as: alice });
    expect(response.status).toBe(422);
  });

  it("filters by tag", async () => {
    expect(ids(await list(server, alice, "tag=deploy"))).toEqual([second.id, first.id]);
    expect(ids(await list(server, alice, "tag=infra"))).toEqual([second.id, third.id]);
    expect(await list(server, alice, "tag=nothing")).toEqual([]);
  });

  it("filters by author with agent", async () => {
    expect(ids(await list(server, alice, "agent=bob"))).toEqual([third.id]);
    expect(ids(await list(server, bob, "agent=bob"))).toEqual([bobsPrivate.id, third.id]);
  });

  it("filters by project, an empty value meaning global entries", async () => {
    expect(ids(await list(server, server.owner, "project=p1"))).toEqual([inProject.id]);
    expect(ids(await list(server, server.owner, "project="))).toEqual([second.id, third.id, first.id]);
  });

  it("filters by scope", async () => {
    expect(ids(await list(server, bob, "scope=agent"))).toEqual([bobsPrivate.id]);
    expect(ids(await list(server, bob, "scope=project"))).toEqual([second.id, third.id, first.id]);
  });

  it("filters by confidence_min, inclusive", async () => {
    expect(ids(await list(server, alice, "confidence_min=0.7"))).toEqual([second.id, third.id]);
    expect(ids(await list(server, alice, "confidence_min=0.9"))).toEqual([second.id]);
  });

  it("filters by updated_before, exclusive", async () => {
    expect(ids(await list(server, alice, `updated_before=${secondPatched.updated_at}`))).toEqual([third.id, first.id]);
    expect(ids(await list(server, alice, `updated_before=${third.updated_at}`))).toEqual([first.id]);
  });

  it("filters by created_before, exclusive", async () => {
    expect(ids(await list(server, alice, `created_before=${third.created_at}`))).toEqual([second.id, first.id]);
  });

  it("filters by min_version", async () => {
    expect(ids(await list(server, alice, "min_version=2"))).toEqual([second.id]);
    expect(ids(await list(server, alice, "min_version=1"))).toEqual([second.id, third.id, first.id]);
  });

  it("filters by min_distinct_readers", async () => {
    expect(ids(await list(server, alice, "min_distinct_readers=1"))).toEqual([third.id]);
  });

  it("combines filters", async () => {
    expect(ids(await list(server, alice, "tag=infra&type=memory"))).toEqual([third.id]);
  });

  it("adds embedding arrays only with include_embedding=true", async () => {
    const plain = await list(server, alice);
    expect(plain.every((entry) => !("embedding" in entry))).toBe(true);
    const withEmbedding = await list(server, alice, "include_embedding=true");
    expect(withEmbedding).toHaveLength(3);
    for (const entry of withEmbedding) {
      expect(Array.isArray(entry.embedding)).toBe(true);
      expect(entry.embedding?.length).toBeGreaterThan(0);
      expect(entry.embedding?.every((value) => typeof value === "number" && Number.isFinite(value))).toBe(true);
    }
  });

  it("pages with a cursor in the same order, without duplicates or gaps", async () => {
    const all = ids(await list(server, server.owner));
    const seen: string[] = [];
    let path: string | null = "/memory?limit=2";
    while (path !== null) {
      const page: Response<MemoryEntry[]> = await server.request<MemoryEntry[]>(path, { as: server.owner });
      expect(page.status).toBe(200);
      expect(page.body.length).toBeLessThanOrEqual(2);
      seen.push(...ids(page.body));
      const cursor = page.headers.get("x-next-cursor");
      if (cursor !== null) expect(page.headers.get("link")).toContain('rel="next"');
      path = cursor === null ? null : `/memory?limit=2&cursor=${encodeURIComponent(cursor)}`;
    }
    expect(seen).toEqual(all);
  });

  it("rejects a limit outside 1..500 with 422", async () => {
    expect((await server.request("/memory?limit=0", { as: alice })).status).toBe(422);
    expect((await server.request("/memory?limit=501", { as: alice })).status).toBe(422);
  });
});

describe("standing directives (DIRECTIVE_WRITERS=human,alice)", () => {
  const server = serverForSuite({ DIRECTIVE_WRITERS: "human,alice" });
  const alice = agentForSuite(server, "alice");
  const bob = agentForSuite(server, "bob");
  let ownerPrivate: MemoryEntry;
  let projectDirective: MemoryEntry;
  let ownerGlobal: MemoryEntry;
  let alicePrivate: MemoryEntry;
  let aliceGlobal: MemoryEntry;
  let plainMemory: MemoryEntry;
  beforeAll(async () => {
    // Written in the reverse of the loading order, so creation order cannot explain the result.
    ownerPrivate = await write(server, server.owner, { content: "Owner private directive", type: "directive", scope: "agent" });
    await afterMillisecond(ownerPrivate.created_at);
    await createProject(server, server.owner, "p1");
    projectDirective = await write(server, server.owner, { content: "P1 directive: use pnpm", type: "directive", project: "p1" });
    await afterMillisecond(projectDirective.created_at);
    alicePrivate = await write(server, alice, { content: "Alice private directive", type: "directive", scope: "agent" });
    await afterMillisecond(alicePrivate.created_at);
    ownerGlobal = await write(server, server.owner, { content: "Global directive: be concise", type: "directive", project: null });
    await afterMillisecond(ownerGlobal.created_at);
    aliceGlobal = await write(server, alice, { content: "Global directive from alice: cite sources", type: "directive" });
    plainMemory = await write(server, server.owner, { content: "An ordinary memory, not a directive" });
  });

  const directives = async (as: Credentials, query = ""): Promise<string[]> => {
    const response = await server.request<MemoryEntry[]>(`/memory/directives${query}`, { as });
    expect(response.status).toBe(200);
    expect(response.body.every((entry) => entry.type === "directive")).toBe(true);
    return ids(response.body);
  };

  it("lists global directives first, then project ones, then the caller's private ones", async () => {
    expect(await directives(server.owner)).toEqual([ownerGlobal.id, aliceGlobal.id, projectDirective.id, ownerPrivate.id]);
  });

  it("lists only directives the caller can see", async () => {
    expect(await directives(alice)).toEqual([ownerGlobal.id, aliceGlobal.id, alicePrivate.id]);
    expect(await directives(bob)).toEqual([ownerGlobal.id, aliceGlobal.id]);
    expect(await directives(server.archivist)).toEqual([ownerGlobal.id, aliceGlobal.id, projectDirective.id]);
  });

  it("returns only global directives for type=directive&scope=project&project= (empty)", async () => {
    expect(ids(await list(server, server.owner, "type=directive&scope=project&project="))).toEqual([aliceGlobal.id, ownerGlobal.id]);
  });

  it("returns only that project's directives for type=directive&scope=project&project=<id>", async () => {
    expect(ids(await list(server, server.owner, "type=directive&scope=project&project=p1"))).toEqual([projectDirective.id]);
  });

  it("returns the caller's private directives for type=directive&scope=agent", async () => {
    expect(ids(await list(server, alice, "type=directive&scope=agent"))).toEqual([alicePrivate.id]);
    expect(ids(await list(server, server.owner, "type=directive&scope=agent"))).toEqual([ownerPrivate.id]);
  });

  it("includes directives in an unfiltered list", async () => {
    const listed = ids(await list(server, server.owner));
    expect(listed).toEqual(expect.arrayContaining([ownerGlobal.id, aliceGlobal.id, projectDirective.id, ownerPrivate.id, plainMemory.id]));
    expect(listed).not.toContain(alicePrivate.id);
  });
});

describe("memory delta", () => {
  const server = serverForSuite();
  const alice = agentForSuite(server, "alice");
  const bob = agentForSuite(server, "bob");
  let a: MemoryEntry;
  let b: MemoryEntry;
  let c: MemoryEntry;
  let d: MemoryEntry;
  let before: string;
  beforeAll(async () => {
    before = new Date(Date.now() - 1000).toISOString();
    a = await write(server, alice, { content: "Delta entry a" });
    await afterMillisecond(a.updated_at);
    b = await write(server, bob, { content: "Delta entry b", type: "doc" });
    await afterMillisecond(b.updated_at);
    c = await write(server, alice, { content: "Delta entry c" });
    await afterMillisecond(c.updated_at);
    await createProject(server, server.owner, "p1");
    d = await write(server, server.owner, { content: "Delta entry d in p1", project: "p1" });
  });

  it("requires since (422 without it)", async () => {
    const response = await server.request<ErrorBody>("/memory/delta", { as: alice });
    expect(response.status).toBe(422);
    expect(response.body.errors?.map((error) => error.path)).toContain("since");
  });

  it("rejects a since that is not a timestamp with 422", async () => {
    expect((await server.request("/memory/delta?since=yesterday", { as: alice })).status).toBe(422);
  });

  it("returns entries changed after since, oldest first", async () => {
    const changes = await delta(server, server.owner, `since=${before}`);
    expect(ids(changes)).toEqual([a.id, b.id, c.id, d.id]);
    expect(changes[0]).toMatchObject({ content: "Delta entry a", version: 1 });
  });

  it("excludes entries updated exactly at since", async () => {
    expect(ids(await delta(server, server.owner, `since=${a.updated_at}`))).toEqual([b.id, c.id, d.id]);
  });

  it("accepts any RFC 3339 time for since", async () => {
    const offset = new Date(Date.parse(before)).toISOString().replace("Z", "+00:00");
    expect(ids(await delta(server, server.owner, `since=${encodeURIComponent(offset)}`))).toEqual([a.id, b.id, c.id, d.id]);
  });

  it("filters by agent, type and project", async () => {
    expect(ids(await delta(server, server.owner, `since=${before}&agent=alice`))).toEqual([a.id, c.id]);
    expect(ids(await delta(server, server.owner, `since=${before}&type=doc`))).toEqual([b.id]);
    expect(ids(await delta(server, server.owner, `since=${before}&project=p1`))).toEqual([d.id]);
    expect(ids(await delta(server, server.owner, `since=${before}&project=`))).toEqual([a.id, b.id, c.id]);
  });

  it("shows only visible entries", async () => {
    expect(ids(await delta(server, bob, `since=${before}`))).toEqual([a.id, b.id, c.id]);
  });

  it("pages with a cursor, oldest first", async () => {
    const first = await server.request<MemoryEntry[]>(`/memory/delta?since=${before}&limit=3`, { as: server.owner });
    expect(ids(first.body)).toEqual([a.id, b.id, c.id]);
    const cursor = first.headers.get("x-next-cursor");
    expect(cursor).not.toBeNull();
    const rest = await server.request<MemoryEntry[]>(`/memory/delta?since=${before}&limit=3&cursor=${encodeURIComponent(cursor ?? "")}`, {
      as: server.owner,
    });
    expect(ids(rest.body)).toEqual([d.id]);
    expect(rest.headers.get("x-next-cursor")).toBeNull();
  });
});

describe("setting a headline", () => {
  const it = test.extend("author", ({ server }) => server.agent("headline-author"));

  it("lets the archivist set a headline without changing version or updated_at", async ({ server, author }) => {
    const entry = await write(server, author, { content: "A long entry about the caching strategy that deserves a headline" });
    const response = await server.request<MemoryEntry>(`/memory/${entry.id}/headline`, {
      as: server.archivist,
      method: "PATCH",
      body: { headline: "Caching strategy" },
    });
    expect(response.status).toBe(200);
    expect(response.body).toMatchObject({ headline: "Caching strategy", version: 1, updated_at: entry.updated_at });
    const read = await server.request<MemoryEntry>(`/memory/${entry.id}`, { as: author });
    expect(read.body).toMatchObject({ headline: "Caching strategy", version: 1, updated_at: entry.updated_at });
    expect(read.headers.get("etag")).toBe('"1"');
  });

  it("refuses a headline from anyone but the archivist with 403, the author and the owner included", async ({ server, author }) => {
    const entry = await write(server, author, { content: "Entry whose headline others try to set" });
    for (const caller of [author, server.owner, await server.agent("headline-other")]) {
      const response = await server.request<ErrorBody>(`/memory/${entry.id}/headline`, {
        as: caller,
        method: "PATCH",
        body: { headline: "Not allowed" },
      });
      expect(response.status).toBe(403);
      expect(response.body.code).toBe("FORBIDDEN");
    }
    const read = await server.request<MemoryEntry>(`/memory/${entry.id}`, { as: author });
    expect(read.body.headline).toBeNull();
  });

  it("refuses the archivist a headline on a directive with 403: directives are never modified by it", async ({ server }) => {
    const directive = await write(server, server.owner, { content: "Always write tests before merging", type: "directive" });
    const response = await server.request<ErrorBody>(`/memory/${directive.id}/headline`, {
      method: "PATCH",
      as: server.archivist,
      body: { headline: "Tests first" },
    });
    expect(response.status).toBe(403);
    const read = await server.request<MemoryEntry>(`/memory/${directive.id}`, { as: server.owner });
    expect(read.body.headline).toBeNull();
  });
});
