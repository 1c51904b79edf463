import { describe, expect } from "vitest";
import type { ArchivistLease as Lease } from "../../src/wire/archivist.js";
import type { GraphEdge as Edge } from "../../src/wire/graph.js";
import type { MemoryEntry as Entry } from "../../src/wire/memory.js";
import { test } from "../helpers/fixtures.js";
import type { Credentials, ErrorBody, TestServer } from "../helpers/server.js";

describe("the archivist lease and its fencing token", () => {
  const it = test.extend("agent", ({ server }) => server.agent("lease-bystander"));
  const lease = (server: TestServer, holder: string, extra: Record<string, unknown> = {}, as: Credentials = server.archivist) =>
    server.request<Lease>("/archivist/lease", { as, body: { holder, ttl_seconds: 30, ...extra } });

  it("shows in the status who holds the lease, to any agent", async ({ server, agent }) => {
    const idle = await server.request("/archivist/status", { as: agent });
    expect(idle.body).toEqual({ enabled: false, holder: null, expires_at: null, llm: null, provider: null, last_pass: null });
    const held = (await lease(server, "status-holder")).body;
    expect((await server.request("/archivist/status", { as: agent })).body).toMatchObject({ holder: "status-holder", expires_at: held.expires_at });
    await lease(server, "status-holder", { release: true });
    expect((await server.request("/archivist/status", { as: agent })).body).toMatchObject({ holder: null });
  });

  it("grants a free lease, refuses a second holder, renews for the first without a new token, and hands over on release", async ({ server }) => {
    const first = await lease(server, "one");
    expect(first.status).toBe(200);
    expect(first.body).toMatchObject({ granted: true, holder: "one" });
    const refused = await lease(server, "two");
    expect(refused.body).toMatchObject({ granted: false, holder: "one", token: first.body.token });
    const renewed = await lease(server, "one");
    expect(renewed.body.granted).toBe(true);
    expect(renewed.body.token).toBe(first.body.token);
    expect(renewed.body.expires_at! >= first.body.expires_at!).toBe(true);
    expect((await lease(server, "two", { release: true })).body).toMatchObject({ granted: false, holder: "one" });
    expect((await lease(server, "one", { release: true })).body).toMatchObject({ granted: false, holder: null });
    const second = await lease(server, "two");
    expect(second.body).toMatchObject({ granted: true, holder: "two", token: first.body.token + 1 });
    await lease(server, "two", { release: true });
  });

  it("is the archivist's alone", async ({ server, agent }) => {
    const response = await lease(server, "intruder", {}, agent);
    expect(response.status).toBe(403);
    expect(response.body).toMatchObject({ code: "FORBIDDEN" });
  });

  it("refuses an archivist write carrying a token that is no longer current, and changes nothing", async ({ server }) => {
    const old = (await lease(server, "fenced-a")).body.token;
    await lease(server, "fenced-a", { release: true });
    const current = (await lease(server, "fenced-b")).body.token;
    expect(current).toBe(old + 1);
    const headers = (token: number) => ({ "X-Archivist-Lease": String(token) });

    const stale = await server.request<ErrorBody>("/memory", { as: server.archivist, headers: headers(old), body: { content: "written by a stale archivist", project: null } });
    expect(stale.status).toBe(409);
    expect(stale.body.detail).toBe("archivist lease token is not current");
    const found = await server.request<unknown[]>("/memory/search?q=stale%20archivist", { as: server.archivist });
    expect(found.body).toEqual([]);
    expect((await server.request("/archivist/state/fence-probe", { as: server.archivist, method: "PUT", headers: headers(old), body: { value: 1 } })).status).toBe(409);
    expect((await server.request("/archivist/state/fence-probe", { as: server.archivist })).status).toBe(404);
    expect((await server.request("/logs", { as: server.archivist, headers: headers(old), body: { source: "archivist", action: "probe" } })).status).toBe(409);
    expect((await server.request("/archivist/state/fence-probe", { as: server.archivist, method: "PUT", headers: { "X-Archivist-Lease": "not-a-token" }, body: { value: 1 } })).status).toBe(409);

    const fresh = await server.request<Entry>("/memory", { as: server.archivist, headers: headers(current), body: { content: "written by the current archivist", project: null } });
    expect(fresh.status).toBe(201);
    // Reads are never fenced.
    expect((await server.request(`/memory/${fresh.body.id}`, { as: server.archivist, headers: headers(old) })).status).toBe(200);
    await lease(server, "fenced-b", { release: true });
  });
});

describe("the archivist's key-value state", () => {
  const it = test.extend("agent", ({ server }) => server.agent("state-bystander"));

  it("answers 404 for an unset key, then stores and returns any JSON value", async ({ server }) => {
    expect((await server.request("/archivist/state/directive_stale_notified:abc", { as: server.archivist })).status).toBe(404);
    const put = await server.request<{ key: string; value: unknown; updated_at: string }>("/archivist/state/directive_stale_notified:abc", {
      as: server.archivist,
      method: "PUT",
      body: { value: "2026-11-25T10:00:00.000Z" },
    });
    expect(put.status).toBe(200);
    expect(put.body).toMatchObject({ key: "directive_stale_notified:abc", value: "2026-11-25T10:00:00.000Z" });
    await server.request("/archivist/state/cursor", { as: server.archivist, method: "PUT", body: { value: { seq: 41, nested: [1, 2] } } });
    const got = await server.request<{ value: unknown }>("/archivist/state/cursor", { as: server.archivist });
    expect(got.body.value).toEqual({ seq: 41, nested: [1, 2] });
  });

  it("refuses values over 16 KiB, bad keys, and callers other than the archivist", async ({ server, agent }) => {
    const big = await server.request<ErrorBody>("/archivist/state/big", { as: server.archivist, method: "PUT", body: { value: "x".repeat(17 * 1024) } });
    expect(big.status).toBe(413);
    expect((await server.request("/archivist/state/bad%20key", { as: server.archivist, method: "PUT", body: { value: 1 } })).status).toBe(422);
    expect((await server.request("/archivist/state/cursor", { as: agent })).status).toBe(403);
    expect((await server.request("/archivist/state/cursor", { as: server.owner, method: "PUT", body: { value: 1 } })).status).toBe(403);
  });
});

describe("confidence decay by the archivist", () => {
  const it = test.extend("agent", ({ server }) => server.agent("decay-writer"));

  it("sets confidence without changing version or updated_at, and emits memory.updated with reason decay", async ({ server, agent }) => {
    const written = await server.request<Entry>("/memory", { as: agent, body: { content: "the staging database is rebuilt nightly", project: null } });
    const decayed = await server.request<{ updated: number }>("/archivist/confidence", {
      as: server.archivist,
      body: { updates: [{ id: written.body.id, confidence: 0.42 }, { id: "00000000-0000-4000-8000-000000000000", confidence: 0.1 }] },
    });
    expect(decayed.status).toBe(200);
    expect(decayed.body).toEqual({ updated: 1 });
    const after = await server.request<Entry>(`/memory/${written.body.id}`, { as: agent });
    expect(after.body).toMatchObject({ confidence: 0.42, version: written.body.version, updated_at: written.body.updated_at });
    const events = await server.request<{ type: string; payload: Record<string, unknown> }[]>("/events?since=seq:0&type=memory.updated", { as: agent });
    expect(events.body.map((event) => event.payload)).toContainEqual(expect.objectContaining({ memory_id: written.body.id, reason: "decay", confidence: 0.42 }));
    // Search filters on the index's copy of confidence: it moved too.
    const hits = await server.request<unknown[]>("/memory/search?q=staging%20database%20rebuilt&confidence_min=0.5", { as: agent });
    expect(hits.body).toEqual([]);
  });

  it("refuses the whole batch when it names a directive, and changes nothing", async ({ server, agent }) => {
    const note = await server.request<Entry>("/memory", { as: agent, body: { content: "release notes go in CHANGELOG.md", project: null } });
    const directive = await server.request<Entry>("/memory", { as: server.owner, body: { content: "Always cite the source file", type: "directive", project: null } });
    const refused = await server.request<ErrorBody>("/archivist/confidence", {
      as: server.archivist,
      body: { updates: [{ id: note.body.id, confidence: 0.2 }, { id: directive.body.id, confidence: 0.2 }] },
    });
    expect(refused.status).toBe(422);
    expect(refused.body.errors).toEqual([{ path: "updates.1.id", message: "a directive's confidence is fixed at 1" }]);
    expect((await server.request<Entry>(`/memory/${note.body.id}`, { as: agent })).body.confidence).toBe(1);
    expect((await server.request<Entry>(`/memory/${directive.body.id}`, { as: server.owner })).body.confidence).toBe(1);
  });

  it("is refused to everyone but the archivist", async ({ server, agent }) => {
    const note = await server.request<Entry>("/memory", { as: agent, body: { content: "only the archivist decays", project: null } });
    const response = await server.request("/archivist/confidence", { as: server.owner, body: { updates: [{ id: note.body.id, confidence: 0.1 }] } });
    expect(response.status).toBe(403);
  });
});

describe("merging by the archivist", () => {
  const it = test
    .extend("alice", ({ server }) => server.agent("merge-alice"))
    .extend("bob", ({ server }) => server.agent("merge-bob"));
  const write = async (server: TestServer, as: Credentials, content: string, extra: Record<string, unknown> = {}) =>
    (await server.request<Entry>("/memory", { as, body: { content, project: null, allow_duplicate: true, ...extra } })).body;

  it("writes the merged entry with both parents and supersedes the sources in one step", async ({ server, alice, bob }) => {
    const a = await write(server, alice, "the API rate limit is 100 requests per minute", { tags: ["api"] });
    const b = await write(server, bob, "the API rate limit is 120 requests per minute", { tags: ["limits"] });
    const since = new Date(Date.now() - 1000).toISOString();
    const merged = await server.request<{ entry: Entry & { tags: string[] }; superseded: string[] }>("/archivist/merge", {
      as: server.archivist,
      body: { sources: [{ id: a.id, version: 1 }, { id: b.id, version: 1 }], content: "The API rate limit is 120 requests per minute (it was 100)." },
    });
    expect(merged.status).toBe(201);
    expect(merged.body.superseded).toEqual([a.id, b.id]);
    expect(merged.body.entry).toMatchObject({ agent_id: "archivist", parents: [a.id, b.id], project: null, type: "memory", version: 2 });
    expect(merged.body.entry.tags.sort()).toEqual(["api", "limits"]);
    expect((await server.request(`/memory/${a.id}`, { as: alice })).status).toBe(404);
    const delta = await server.request<{ id: string; superseded_by?: string }[]>(`/memory/delta?since=${since}&limit=50`, { as: alice });
    expect(delta.body).toContainEqual(expect.objectContaining({ id: a.id, superseded_by: merged.body.entry.id }));
    expect(delta.body).toContainEqual(expect.objectContaining({ id: b.id, superseded_by: merged.body.entry.id }));
    const deleted = await server.request<{ payload: Record<string, unknown> }[]>("/events?since=seq:0&type=memory.deleted", { as: alice });
    expect(deleted.body.map((event) => event.payload)).toContainEqual(expect.objectContaining({ memory_id: a.id, reason: "merged", superseded_by: merged.body.entry.id }));
  });

  it("tells each author in the merge's own transaction, and a deleted author does not stop it", async ({ server, alice }) => {
    const carol = await server.agent("merge-carol");
    const a = await write(server, alice, "the staging database is reset nightly at 02:00");
    const b = await write(server, carol, "the staging database is reset every night at 2am");
    expect((await server.request(`/agents/${carol.agentId}`, { as: server.owner, method: "DELETE" })).status).toBeLessThan(300);
    const subject = "Memory entries merged";
    const merged = await server.request<{ entry: Entry }>("/archivist/merge", {
      as: server.archivist,
      body: { sources: [{ id: a.id, version: 1 }, { id: b.id, version: 1 }], content: "Staging is reset nightly at 02:00.", notify: { subject, note: "Two entries overlapped." } },
    });
    expect(merged.status).toBe(201);
    // Already there when the merge answers: no second request was needed to deliver it.
    const told = (await server.request<{ from: string; subject: string; body: string }[]>("/messages/inbox", { as: alice })).body.filter((message) => message.subject === subject);
    expect(told).toHaveLength(1);
    expect(told[0]?.from).toBe("archivist");
    expect(told[0]?.body).toBe(
      `Two entries overlapped. The archivist merged ${a.id} (by merge-alice) and ${b.id} (by merge-carol) into ${merged.body.entry.id}. ` +
        `Your entry ${a.id} is superseded; read ${merged.body.entry.id} for the combined version.`,
    );
    const sent = await server.request<{ to: string }[]>("/messages?limit=100", { as: server.archivist });
    expect(sent.body.filter((message) => message.to === "merge-carol")).toEqual([]);
  });

  it("answers a merged-away id with 404 naming what it became, to those who could see it only", async ({ server, alice, bob }) => {
    await server.request("/projects", { as: alice, body: { name: "Merge Room" } });
    await server.request("/projects/merge-room/join", { as: bob, method: "POST" });
    const outsider = await server.agent("merge-outsider");
    const a = await write(server, alice, "the merge room cache holds 10 minutes", { project: "merge-room" });
    const b = await write(server, bob, "the merge room cache holds ten minutes", { project: "merge-room" });
    const merged = await server.request<{ entry: Entry }>("/archivist/merge", {
      as: server.archivist,
      body: { sources: [{ id: a.id, version: 1 }, { id: b.id, version: 1 }], content: "The merge room cache holds 10 minutes." },
    });
    const gone = await server.request<ErrorBody & { superseded_by?: string }>(`/memory/${a.id}`, { as: bob });
    expect(gone.status).toBe(404);
    expect(gone.body).toMatchObject({ code: "NOT_FOUND", superseded_by: merged.body.entry.id, detail: `memory entry not found: it was merged into ${merged.body.entry.id}` });
    // A non-member learns nothing, not even that the id existed.
    const hidden = await server.request<ErrorBody & { superseded_by?: string }>(`/memory/${a.id}`, { as: outsider });
    expect(hidden.status).toBe(404);
    expect(hidden.body.superseded_by).toBeUndefined();
    expect(hidden.body.detail).toBe((await server.request<ErrorBody>(`/memory/${crypto.randomUUID()}`, { as: outsider })).body.detail);
    // Plainly deleted entries stay plain 404s.
    const deleted = await write(server, alice, "a note deleted by its author", { project: "merge-room" });
    await server.request(`/memory/${deleted.id}`, { as: alice, method: "DELETE" });
    expect((await server.request<ErrorBody & { superseded_by?: string }>(`/memory/${deleted.id}`, { as: alice })).body.superseded_by).toBeUndefined();
  });

  it("refuses a source that changed since it was read, and merges nothing", async ({ server, alice, bob }) => {
    const a = await write(server, alice, "deploys happen on Tuesday");
    const b = await write(server, bob, "deploys happen on Tuesdays and Thursdays");
    await server.request(`/memory/${a.id}`, { as: alice, method: "PATCH", body: { content: "deploys happen on Wednesday" } });
    const response = await server.request<ErrorBody & { id: string; current_version: number }>("/archivist/merge", {
      as: server.archivist,
      body: { sources: [{ id: a.id, version: 1 }, { id: b.id, version: 1 }], content: "merged" },
    });
    expect(response.status).toBe(409);
    expect(response.body).toMatchObject({ id: a.id, current_version: 2 });
    expect((await server.request(`/memory/${b.id}`, { as: bob })).status).toBe(200);
  });

  it("never merges a directive, nor entries of different projects", async ({ server, alice }) => {
    const note = await write(server, alice, "use pnpm for installs");
    const directive = (await server.request<Entry>("/memory", { as: server.owner, body: { content: "Use npm for installs", type: "directive", project: null } })).body;
    const withDirective = await server.request<ErrorBody>("/archivist/merge", {
      as: server.archivist,
      body: { sources: [{ id: note.id, version: 1 }, { id: directive.id, version: 1 }], content: "merged" },
    });
    expect(withDirective.status).toBe(422);
    expect((await server.request(`/memory/${directive.id}`, { as: server.owner })).status).toBe(200);

    await server.request("/projects", { as: alice, body: { name: "Merge Elsewhere" } });
    const inProject = await write(server, alice, "use pnpm for installs here", { project: "merge-elsewhere" });
    const acrossProjects = await server.request<ErrorBody>("/archivist/merge", {
      as: server.archivist,
      body: { sources: [{ id: note.id, version: 1 }, { id: inProject.id, version: 1 }], content: "merged" },
    });
    expect(acrossProjects.status).toBe(422);
    expect(acrossProjects.body.errors?.[0]?.message).toBe("sources must share one project and scope");
  });

  it("is refused to everyone but the archivist", async ({ server, alice, bob }) => {
    const a = await write(server, alice, "one fact");
    const b = await write(server, bob, "one more fact");
    const response = await server.request("/archivist/merge", { as: server.owner, body: { sources: [{ id: a.id, version: 1 }, { id: b.id, version: 1 }], content: "x" } });
    expect(response.status).toBe(403);
  });
});

describe("graph edges", () => {
  const it = test
    .extend("alice", ({ server }) => server.agent("graph-alice"))
    .extend("bob", ({ server }) => server.agent("graph-bob"));
  const write = async (server: TestServer, as: Credentials, content: string, extra: Record<string, unknown> = {}) =>
    (await server.request<Entry>("/memory", { as, body: { content, project: null, allow_duplicate: true, ...extra } })).body;

  it("records a typed edge, updates its note on repeat, and lists it both ways on the node", async ({ server, alice, bob }) => {
    const a = await write(server, alice, "the cache is keyed by tenant");
    const b = await write(server, bob, "cache misses spike after tenant migrations");
    const first = await server.request<Edge>("/graph/edge", { as: alice, body: { src: b.id, dst: a.id, rel: "supports" } });
    expect(first.status).toBe(201);
    expect(first.body).toMatchObject({ src: b.id, dst: a.id, rel: "supports", note: null, project: null });
    const again = await server.request<Edge>("/graph/edge", { as: alice, body: { src: b.id, dst: a.id, rel: "supports", note: "same tenant key" } });
    expect(again.body).toMatchObject({ id: first.body.id, note: "same tenant key" });
    const node = await server.request<{ node: Entry; edges: { out: Edge[]; in: Edge[] } }>(`/graph/${a.id}`, { as: bob });
    expect(node.body.node.id).toBe(a.id);
    expect(node.body.edges.in.map((edge) => edge.id)).toEqual([first.body.id]);
    expect(node.body.edges.out).toEqual([]);
    const listed = await server.request<Edge[]>("/graph?rel=supports", { as: bob });
    expect(listed.body.map((edge) => edge.id)).toContain(first.body.id);
    expect((await server.request<Edge[]>("/graph?rel=contradicts", { as: bob })).body.map((edge) => edge.id)).not.toContain(first.body.id);
  });

  it("shows an edge only to whoever can see both ends", async ({ server, alice, bob }) => {
    await server.request("/projects", { as: alice, body: { name: "Graph Private" } });
    const inProject = await write(server, alice, "the project's secret detail", { project: "graph-private" });
    const global = await write(server, alice, "a global fact about the project");
    const edge = await server.request<Edge>("/graph/edge", { as: alice, body: { src: inProject.id, dst: global.id, rel: "relates_to" } });
    expect(edge.body.project).toBe("graph-private");
    expect((await server.request<Edge[]>("/graph?project=graph-private", { as: alice })).body.map((e) => e.id)).toEqual([edge.body.id]);
    expect((await server.request<Edge[]>("/graph?project=graph-private", { as: bob })).body).toEqual([]);
    expect((await server.request<{ edges: { in: Edge[] } }>(`/graph/${global.id}`, { as: bob })).body.edges.in).toEqual([]);
    expect((await server.request(`/graph/${inProject.id}`, { as: bob })).status).toBe(404);
    expect((await server.request("/graph/edge", { as: bob, body: { src: global.id, dst: inProject.id, rel: "relates_to" } })).status).toBe(404);

    await server.request(`/memory/${global.id}`, { as: alice, method: "DELETE" });
    expect((await server.request<Edge[]>("/graph?project=graph-private", { as: alice })).body).toEqual([]);
  });

  it("refuses a self-loop and a link across projects", async ({ server, alice }) => {
    const a = await write(server, alice, "a lonely fact");
    expect((await server.request("/graph/edge", { as: alice, body: { src: a.id, dst: a.id, rel: "relates_to" } })).status).toBe(422);
    await server.request("/projects", { as: alice, body: { name: "Graph One" } });
    await server.request("/projects", { as: alice, body: { name: "Graph Two" } });
    const one = await write(server, alice, "fact in one", { project: "graph-one" });
    const two = await write(server, alice, "fact in two", { project: "graph-two" });
    const response = await server.request<ErrorBody>("/graph/edge", { as: alice, body: { src: one.id, dst: two.id, rel: "contradicts" } });
    expect(response.status).toBe(422);
    expect(response.body.errors?.[0]?.message).toBe("entries of different projects cannot be linked");
  });
});

describe("the archivist's log", () => {
  const it = test.extend("agent", ({ server }) => server.agent("log-reader"));

  it("takes entries from the archivist and the owner, and shows them to the owner newest first with filters", async ({ server }) => {
    const first = await server.request<{ id: string; agent_id: string }>("/logs", {
      as: server.archivist,
      body: { level: "info", source: "archivist", action: "synthesis", message: "pass done", details: { entries: 12 } },
    });
    expect(first.status).toBe(201);
    expect(first.body.agent_id).toBe("archivist");
    await server.request("/logs", { as: server.archivist, body: { level: "warn", source: "archivist", action: "merge", message: "llm timed out" } });
    await server.request("/logs", { as: server.owner, body: { source: "human", action: "note", message: "rotated keys" } });
    const all = await server.request<{ action: string; level: string; details: Record<string, unknown> }[]>("/logs", { as: server.owner });
    expect(all.body.map((entry) => entry.action)).toEqual(["note", "merge", "synthesis"]);
    expect(all.body[2]?.details).toEqual({ entries: 12 });
    expect((await server.request<{ action: string }[]>("/logs?level=warn", { as: server.owner })).body.map((entry) => entry.action)).toEqual(["merge"]);
    expect((await server.request<{ action: string }[]>("/logs?source=archivist&action=synthesis", { as: server.owner })).body).toHaveLength(1);
    const paged = await server.request<unknown[]>("/logs?limit=2", { as: server.owner });
    expect(paged.body).toHaveLength(2);
    const next = await server.request<{ action: string }[]>(`/logs?limit=2&cursor=${paged.headers.get("x-next-cursor")}`, { as: server.owner });
    expect(next.body.map((entry) => entry.action)).toEqual(["synthesis"]);
  });

  it("is written only by the archivist and the owner, and read only by the owner", async ({ server, agent }) => {
    expect((await server.request("/logs", { as: agent, body: { source: "me", action: "forge" } })).status).toBe(403);
    expect((await server.request("/logs", { as: agent })).status).toBe(403);
    expect((await server.request("/logs", { as: server.archivist })).status).toBe(403);
  });

  it("refuses details over 16 KiB", async ({ server }) => {
    const response = await server.request("/logs", { as: server.archivist, body: { source: "archivist", action: "big", details: { blob: "x".repeat(17 * 1024) } } });
    expect(response.status).toBe(413);
  });
});
