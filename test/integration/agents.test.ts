import { readFileSync, statSync } from "node:fs";
import { join } from "node:path";
import { beforeAll, describe, expect } from "vitest";
import type { AgentRecord, AgentSelf as SelfRecord } from "../../src/wire/agents.js";
import type { MemoryEntry as Entry } from "../../src/wire/memory.js";
import { it } from "../helpers/fixtures.js";
import { RFC3339_MS, startTestServer, type Credentials, type Response, type TestServer } from "../helpers/server.js";
import { serverForSuite } from "../helpers/suite.js";

/** The path and query of a `Link: <…>; rel="next"` header, or null when there is none. */
function nextLink(link: string | null, base: string): string | null {
  if (link === null) return null;
  const target = /^<([^>]+)>;\s*rel="next"$/.exec(link)?.[1];
  if (target === undefined) throw new Error(`malformed Link header: ${link}`);
  const url = new URL(target, base);
  return url.pathname + url.search;
}

async function listAll(server: TestServer, as: Credentials): Promise<AgentRecord[]> {
  const response = await server.request<AgentRecord[]>("/agents?limit=500", { as });
  expect(response.status).toBe(200);
  return response.body;
}

async function status(server: TestServer, path: string, as: Credentials): Promise<number> {
  return (await server.request(path, { as })).status;
}

/** A plain POST /memory (no `allow_duplicate`) that must create the entry. */
async function write(server: TestServer, as: Credentials, content: string, extra: Record<string, unknown> = {}): Promise<Entry> {
  const response = await server.request<Entry>("/memory", { as, body: { content, ...extra } });
  expect(response.status).toBe(201);
  return response.body;
}

describe("GET /agents and /participants", () => {
  it("lists every agent with presence, and /participants is the same list", async ({ server }) => {
    const fresh = await server.agent("fresh");
    const before = (await listAll(server, server.owner)).find((agent) => agent.agent_id === "fresh");
    expect(before).toMatchObject({ agent_id: "fresh", role: "agent", display_name: null, last_seen_at: null, online: false });
    expect(before?.created_at).toMatch(RFC3339_MS);

    expect(await status(server, "/agents/me", fresh)).toBe(200);
    const agents = await listAll(server, server.owner);
    const after = agents.find((agent) => agent.agent_id === "fresh");
    expect(after?.online).toBe(true);
    expect(after?.last_seen_at).toMatch(RFC3339_MS);
    // The archivist never made a request here (ARCHIVIST=off).
    expect(agents.find((agent) => agent.agent_id === "archivist")).toMatchObject({ role: "archivist", online: false, last_seen_at: null });
    expect(agents.find((agent) => agent.agent_id === "human")).toMatchObject({ role: "owner", online: true });

    const participants = await server.request<AgentRecord[]>("/participants?limit=500", { as: server.owner });
    expect(participants.status).toBe(200);
    expect(participants.body.map((agent) => agent.agent_id)).toEqual(agents.map((agent) => agent.agent_id));
  });

  it("never exposes a key or a hash", async ({ server }) => {
    const other = await server.agent("secretive");
    const responses = [
      await server.request<AgentRecord[]>("/agents", { as: other }),
      await server.request<AgentRecord[]>("/participants", { as: other }),
      await server.request<AgentRecord[]>("/agents/me", { as: other }),
      await server.request<AgentRecord[]>("/agents/me", { as: server.owner }),
    ];
    for (const response of responses) {
      expect(response.status).toBe(200);
      for (const secret of [other.apiKey, server.owner.apiKey, server.archivist.apiKey]) expect(response.text).not.toContain(secret);
      for (const record of [response.body].flat()) {
        for (const field of Object.keys(record)) expect(field).not.toMatch(/key|hash|secret|password|token/i);
      }
    }
    const fields = Object.keys((await listAll(server, other))[0] ?? {}).sort();
    expect(fields).toEqual(["agent_id", "claimed_tasks", "created_at", "current_project", "display_name", "last_seen_at", "online", "role"]);
  });

  it("shows an agent's current project and claimed tasks only as far as the caller can see them", async ({ server }) => {
    const [worker, insider, outsider] = [await server.agent("in-secret"), await server.agent("insider"), await server.agent("outsider")];
    expect((await server.request("/projects", { as: worker, body: { name: "skunkworks" } })).status).toBe(201);
    expect((await server.request("/projects/skunkworks/join", { method: "POST", as: insider })).status).toBe(200);
    const hidden = await server.request<{ id: string }>("/tasks", { as: worker, body: { title: "the secret task", project: "skunkworks" } });
    const open = await server.request<{ id: string }>("/tasks", { as: worker, body: { title: "a global task", project: null } });
    for (const task of [hidden, open]) expect((await server.request(`/tasks/${task.body.id}/claim`, { method: "POST", as: worker })).status).toBe(200);
    const seenBy = async (as: Credentials) => {
      const records = (await server.request<AgentRecord[]>("/agents?limit=500", { as })).body;
      return records.find((record) => record.agent_id === "in-secret");
    };
    expect(await seenBy(outsider)).toMatchObject({ current_project: null, claimed_tasks: [open.body.id] });
    const participants = await server.request<AgentRecord[]>("/participants?limit=500", { as: outsider });
    expect(participants.text).not.toContain("skunkworks");
    expect(participants.text).not.toContain(hidden.body.id);
    for (const viewer of [insider, worker, server.owner, server.archivist]) {
      expect(await seenBy(viewer)).toMatchObject({ current_project: "skunkworks", claimed_tasks: [hidden.body.id, open.body.id] });
    }
    const me = await server.request<AgentRecord>("/agents/me", { as: worker });
    expect(me.body).toMatchObject({ current_project: "skunkworks", claimed_tasks: [hidden.body.id, open.body.id] });
  });

  it("does not list deleted agents", async ({ server }) => {
    const leaving = await server.agent("leaving");
    expect((await listAll(server, server.owner)).map((agent) => agent.agent_id)).toContain("leaving");
    expect((await server.request("/agents/me", { as: leaving, method: "DELETE" })).status).toBe(204);
    expect((await listAll(server, server.owner)).map((agent) => agent.agent_id)).not.toContain("leaving");
  });
});

describe("GET /agents paging", () => {
  const server = serverForSuite();
  let expected: string[];
  beforeAll(async () => {
    for (const id of ["p-delta", "p-alpha", "p-golf", "p-charlie", "p-echo", "p-bravo", "p-foxtrot"]) await server.agent(id);
    expected = (await listAll(server, server.owner)).map((agent) => agent.agent_id);
  });

  it("has all nine agents in one page when the page is big enough", () => {
    expect(expected).toHaveLength(9);
    expect(new Set(expected).size).toBe(9);
  });

  it.each(["0", "501", "-1", "1.5", "abc"])("limit=%s → 422", async (limit) => {
    const response = await server.request(`/agents?limit=${limit}`, { as: server.owner });
    expect(response.status).toBe(422);
    expect(response.body).toMatchObject({ code: "VALIDATION_FAILED" });
  });

  it("limit=1 and limit=500 are accepted", async () => {
    expect((await server.request<AgentRecord[]>("/agents?limit=1", { as: server.owner })).body).toHaveLength(1);
    expect((await server.request<AgentRecord[]>("/agents?limit=500", { as: server.owner })).body).toHaveLength(9);
  });

  it("follows X-Next-Cursor through every agent with no gaps or duplicates", async () => {
    const seen: string[] = [];
    let cursor: string | null = null;
    let pages = 0;
    do {
      const query: string = cursor === null ? "" : `&cursor=${encodeURIComponent(cursor)}`;
      const page = await server.request<AgentRecord[]>(`/agents?limit=2${query}`, { as: server.owner });
      expect(page.status).toBe(200);
      expect(page.body.length).toBeGreaterThan(0);
      expect(page.body.length).toBeLessThanOrEqual(2);
      seen.push(...page.body.map((agent) => agent.agent_id));
      cursor = page.headers.get("x-next-cursor");
      if (cursor !== null) expect(page.headers.get("link")).toContain(`cursor=${encodeURIComponent(cursor)}`);
      else expect(page.headers.get("link")).toBeNull();
      pages++;
    } while (cursor !== null && pages < 20);
    expect(pages).toBe(5);
    expect(seen).toEqual(expected);
  });

  it("follows the Link header through every agent", async () => {
    const seen: string[] = [];
    let next: string | null = "/participants?limit=2";
    let pages = 0;
    while (next !== null && pages < 20) {
      const page: Response<AgentRecord[]> = await server.request<AgentRecord[]>(next, { as: server.owner });
      expect(page.status).toBe(200);
      seen.push(...page.body.map((agent) => agent.agent_id));
      next = nextLink(page.headers.get("link"), server.url);
      if (next !== null) expect(next).toContain("limit=2");
      pages++;
    }
    expect(seen).toEqual(expected);
  });

  it("an invalid cursor → 422", async () => {
    const response = await server.request("/agents?cursor=not-a-cursor", { as: server.owner });
    expect(response.status).toBe(422);
    expect(response.body).toMatchObject({ code: "VALIDATION_FAILED" });
  });
});

describe("GET /agents/me", () => {
  it.override("serverEnv", { DIRECTIVE_WRITERS: "human,lead" });

  it("adds projects and can_write_directives to the record", async ({ server }) => {
    const me = await server.request<SelfRecord>("/agents/me", { as: server.owner });
    expect(me.status).toBe(200);
    expect(me.body).toMatchObject({ agent_id: "human", role: "owner", can_write_directives: true, projects: [] });
    expect(me.body.created_at).toMatch(RFC3339_MS);
    expect(me.body.last_seen_at).toMatch(RFC3339_MS);
    expect(me.body.online).toBe(true);
  });

  it("can_write_directives is true for an agent in DIRECTIVE_WRITERS, and the server agrees", async ({ server }) => {
    const lead = await server.agent("lead");
    const me = await server.request<SelfRecord>("/agents/me", { as: lead });
    expect(me.body).toMatchObject({ agent_id: "lead", role: "agent", can_write_directives: true });
    const directive = await server.request("/memory", {
      as: lead,
      body: { content: "always run the tests", type: "directive", project: null },
    });
    expect(directive.status).toBe(201);
  });

  it("can_write_directives is false for other agents and the archivist, and the server agrees", async ({ server }) => {
    const worker = await server.agent("worker");
    expect((await server.request<SelfRecord>("/agents/me", { as: worker })).body.can_write_directives).toBe(false);
    expect((await server.request<SelfRecord>("/agents/me", { as: server.archivist })).body).toMatchObject({
      role: "archivist",
      can_write_directives: false,
    });
    const directive = await server.request("/memory", { as: worker, body: { content: "never run the tests", type: "directive" } });
    expect(directive.status).toBe(403);
    expect(directive.body).toEqual({ detail: "directive writes require elevated permission", code: "FORBIDDEN" });
  });
});

describe("GET /agents/me with the default DIRECTIVE_WRITERS", () => {
  it("only the UI identity may write directives", async () => {
    const server = await startTestServer();
    try {
      const agent = await server.agent("plain");
      expect((await server.request<SelfRecord>("/agents/me", { as: server.owner })).body.can_write_directives).toBe(true);
      expect((await server.request<SelfRecord>("/agents/me", { as: agent })).body.can_write_directives).toBe(false);
      expect((await server.request<SelfRecord>("/agents/me", { as: server.archivist })).body.can_write_directives).toBe(false);
    } finally {
      await server.close();
    }
  });
});

describe("PATCH /agents/me", () => {
  it("renames: the new id works with the same key, the old id does not, and entries follow", async ({ server }) => {
    const old = await server.agent("old-name");
    const shared = await write(server, old, "a shared finding about caching", { project: null });
    const secret = await write(server, old, "a private note about zebras", { scope: "agent" });
    const reader = await server.agent("reader");

    const renamed = await server.request<AgentRecord>("/agents/me", { as: old, method: "PATCH", body: { agent_id: "new-name" } });
    expect(renamed.status).toBe(200);
    expect(renamed.body).toMatchObject({ agent_id: "new-name", role: "agent" });

    const now: Credentials = { agentId: "new-name", apiKey: old.apiKey };
    expect(await status(server, "/agents/me", old)).toBe(401);
    const me = await server.request<SelfRecord>("/agents/me", { as: now });
    expect(me.status).toBe(200);
    expect(me.body.agent_id).toBe("new-name");

    // Every record naming the old id now names the new one.
    expect((await server.request<Entry>(`/memory/${shared.id}`, { as: reader })).body.agent_id).toBe("new-name");
    const privateRead = await server.request<Entry>(`/memory/${secret.id}`, { as: now });
    expect(privateRead.status).toBe(200);
    expect(privateRead.body).toMatchObject({ agent_id: "new-name", scope: "agent" });
    const mine = await server.request<Entry[]>("/memory?agent=new-name", { as: now });
    expect(mine.body.map((entry) => entry.id).sort()).toEqual([shared.id, secret.id].sort());
    expect((await server.request<Entry[]>("/memory?agent=old-name", { as: now })).body).toEqual([]);
    // Found by meaning as well as by keyword: the vector index follows the rename too.
    const found = await server.request<(Entry & { match: string })[]>(
      `/memory/search?q=${encodeURIComponent("a private note about zebras")}`,
      { as: now },
    );
    expect(found.status).toBe(200);
    expect(found.body.find((entry) => entry.id === secret.id)?.match).toBe("both");

    // Still private: not the reader, not the owner.
    expect(await status(server, `/memory/${secret.id}`, reader)).toBe(404);
    expect(await status(server, `/memory/${secret.id}`, server.owner)).toBe(404);

    const ids = (await listAll(server, server.owner)).map((agent) => agent.agent_id);
    expect(ids).toContain("new-name");
    expect(ids).not.toContain("old-name");

    // The event log is rewritten too (including the private entry's event, still visible to its author).
    const events = (agent: string) =>
      server.request<{ type: string; payload: Record<string, unknown> }[]>(`/events?since=seq:0&agent=${agent}&limit=500`, { as: now });
    expect((await events("old-name")).body).toEqual([]);
    const renamedEvents = (await events("new-name")).body;
    expect(renamedEvents.filter((event) => event.type === "memory.written")).toHaveLength(2);
    expect(renamedEvents.find((event) => event.type === "agent.renamed")?.payload).toMatchObject({ from: "old-name", to: "new-name" });
  });

  it("the renamed agent keeps writing under its new id", async ({ server }) => {
    const agent = await server.agent("before-rename");
    expect((await server.request("/agents/me", { as: agent, method: "PATCH", body: { agent_id: "after-rename" } })).status).toBe(200);
    const entry = await write(server, { agentId: "after-rename", apiKey: agent.apiKey }, "written after the rename");
    expect(entry.agent_id).toBe("after-rename");
  });

  it("renaming to a taken id → 409 and nothing changes", async ({ server }) => {
    const taker = await server.agent("taker");
    await server.agent("occupied");
    const gone = await server.agent("gone-agent");
    expect((await server.request("/agents/me", { as: gone, method: "DELETE" })).status).toBe(204);

    for (const target of ["occupied", "human", "archivist", "gone-agent"]) {
      const response = await server.request("/agents/me", { as: taker, method: "PATCH", body: { agent_id: target } });
      expect(response.status, target).toBe(409);
      expect(response.body).toMatchObject({ code: "CONFLICT" });
    }
    expect((await server.request<SelfRecord>("/agents/me", { as: taker })).body.agent_id).toBe("taker");
  });

  it("renaming to the same id is a no-op", async ({ server }) => {
    const same = await server.agent("same-id");
    const response = await server.request<AgentRecord>("/agents/me", { as: same, method: "PATCH", body: { agent_id: "same-id" } });
    expect(response.status).toBe(200);
    expect(response.body.agent_id).toBe("same-id");
    expect(await status(server, "/agents/me", same)).toBe(200);
  });

  it("renaming the UI or archivist identity → 422", async ({ server }) => {
    for (const as of [server.owner, server.archivist]) {
      const response = await server.request("/agents/me", { as, method: "PATCH", body: { agent_id: `${as.agentId}-2` } });
      expect(response.status).toBe(422);
      expect(response.body).toMatchObject({ code: "VALIDATION_FAILED" });
      expect(await status(server, "/agents/me", as)).toBe(200);
    }
    expect((await server.request("/agents/archivist", { as: server.owner, method: "PATCH", body: { agent_id: "keeper" } })).status).toBe(
      422,
    );
  });

  it("an invalid id or an unknown field → 422", async ({ server }) => {
    const agent = await server.agent("validated");
    for (const body of [{ agent_id: "Upper" }, { agent_id: "" }, { agent_id: "me" }, { agent_id: "x".repeat(65) }, { role: "owner" }, { display_name: "" }]) {
      const response = await server.request("/agents/me", { as: agent, method: "PATCH", body });
      expect(response.status, JSON.stringify(body)).toBe(422);
    }
    expect((await server.request<SelfRecord>("/agents/me", { as: agent })).body).toMatchObject({ agent_id: "validated", role: "agent" });
  });

  it("sets and clears the display name", async ({ server }) => {
    const agent = await server.agent("named");
    const set = await server.request<AgentRecord>("/agents/me", { as: agent, method: "PATCH", body: { display_name: "  Named Agent " } });
    expect(set.status).toBe(200);
    expect(set.body).toMatchObject({ agent_id: "named", display_name: "Named Agent" });
    expect((await listAll(server, server.owner)).find((a) => a.agent_id === "named")?.display_name).toBe("Named Agent");
    const cleared = await server.request<AgentRecord>("/agents/me", { as: agent, method: "PATCH", body: { display_name: null } });
    expect(cleared.body.display_name).toBeNull();
    const unchanged = await server.request<AgentRecord>("/agents/me", { as: agent, method: "PATCH", body: {} });
    expect(unchanged.status).toBe(200);
    expect(unchanged.body).toMatchObject({ agent_id: "named", display_name: null });
  });

  it("renames and sets the display name in one request", async ({ server }) => {
    const agent = await server.agent("both-a");
    const response = await server.request<AgentRecord>("/agents/me", {
      as: agent,
      method: "PATCH",
      body: { agent_id: "both-b", display_name: "Both" },
    });
    expect(response.status).toBe(200);
    expect(response.body).toMatchObject({ agent_id: "both-b", display_name: "Both" });
  });
});

describe("DELETE /agents/me", () => {
  it("→ 204; the key stops working, entries stay attributed to the old id, the id is never reissued", async ({ server }) => {
    const quitter = await server.agent("quitter");
    const entry = await write(server, quitter, "knowledge that outlives its author", { project: null });
    const reader = await server.agent("survivor");

    const deleted = await server.request("/agents/me", { as: quitter, method: "DELETE" });
    expect(deleted.status).toBe(204);
    expect(deleted.text).toBe("");
    expect(await status(server, "/agents/me", quitter)).toBe(401);

    const read = await server.request<Entry>(`/memory/${entry.id}`, { as: reader });
    expect(read.status).toBe(200);
    expect(read.body).toMatchObject({ agent_id: "quitter", content: "knowledge that outlives its author" });
    expect((await server.request<Entry[]>("/memory?agent=quitter", { as: reader })).body.map((e) => e.id)).toEqual([entry.id]);

    const again = await server.request("/agents/self-register", { body: { agent_id: "quitter" } });
    expect(again.status).toBe(409);
    expect(again.text).not.toContain("cairn_");
  });

  it("the UI and archivist identities cannot delete themselves (422)", async ({ server }) => {
    for (const as of [server.owner, server.archivist]) {
      expect((await server.request("/agents/me", { as, method: "DELETE" })).status).toBe(422);
      expect(await status(server, "/agents/me", as)).toBe(200);
    }
  });
});

describe("PATCH and DELETE /agents/{id} (owner only)", () => {
  it("an agent or the archivist → 403 and nothing changes", async ({ server }) => {
    const actor = await server.agent("actor");
    const target = await server.agent("target");
    for (const as of [actor, server.archivist]) {
      const patch = await server.request("/agents/target", { as, method: "PATCH", body: { display_name: "Hijacked" } });
      expect(patch.status).toBe(403);
      expect(patch.body).toMatchObject({ code: "FORBIDDEN" });
      expect((await server.request("/agents/target", { as, method: "PATCH", body: { agent_id: "stolen" } })).status).toBe(403);
      expect((await server.request("/agents/target", { as, method: "DELETE" })).status).toBe(403);
    }
    expect((await server.request<SelfRecord>("/agents/me", { as: target })).body).toMatchObject({ agent_id: "target", display_name: null });
  });

  it("the owner renames another agent → 200, and its key works under the new id", async ({ server }) => {
    const subject = await server.agent("subject");
    const entry = await write(server, subject, "entry of the subject");
    const response = await server.request<AgentRecord>("/agents/subject", {
      as: server.owner,
      method: "PATCH",
      body: { agent_id: "subject-2", display_name: "Subject Two" },
    });
    expect(response.status).toBe(200);
    expect(response.body).toMatchObject({ agent_id: "subject-2", display_name: "Subject Two" });
    expect(await status(server, "/agents/me", subject)).toBe(401);
    expect(await status(server, "/agents/me", { agentId: "subject-2", apiKey: subject.apiKey })).toBe(200);
    expect((await server.request<Entry>(`/memory/${entry.id}`, { as: server.owner })).body.agent_id).toBe("subject-2");
  });

  it("the owner deletes another agent → 204, and its key stops working", async ({ server }) => {
    const victim = await server.agent("victim");
    expect((await server.request("/agents/victim", { as: server.owner, method: "DELETE" })).status).toBe(204);
    expect(await status(server, "/agents/me", victim)).toBe(401);
    expect((await server.request("/agents/victim", { as: server.owner, method: "DELETE" })).status).toBe(404);
    const patch = await server.request("/agents/victim", { as: server.owner, method: "PATCH", body: { display_name: "Zombie" } });
    expect(patch.status).toBe(404);
    expect((await server.request("/agents/self-register", { body: { agent_id: "victim" } })).status).toBe(409);
  });

  it("an unknown agent → 404", async ({ server }) => {
    const patch = await server.request("/agents/no-such-agent", { as: server.owner, method: "PATCH", body: { display_name: "x" } });
    expect(patch.status).toBe(404);
    expect(patch.body).toMatchObject({ code: "NOT_FOUND" });
    expect((await server.request("/agents/no-such-agent", { as: server.owner, method: "DELETE" })).status).toBe(404);
  });

  it("the owner cannot delete the UI or archivist identity (422)", async ({ server }) => {
    expect((await server.request("/agents/human", { as: server.owner, method: "DELETE" })).status).toBe(422);
    expect((await server.request("/agents/archivist", { as: server.owner, method: "DELETE" })).status).toBe(422);
    expect(await status(server, "/agents/me", server.archivist)).toBe(200);
  });
});

describe("POST /agents/{id}/rotate-key", () => {
  const rotate = (server: TestServer, id: string, as: Credentials) =>
    server.request<{ api_key: string }>(`/agents/${id}/rotate-key`, { as, method: "POST" });

  it("by the agent itself → {api_key}; the old key stops working, the new one works", async ({ server }) => {
    const self = await server.agent("rotator");
    const response = await rotate(server, "rotator", self);
    expect(response.status).toBe(200);
    expect(Object.keys(response.body)).toEqual(["api_key"]);
    expect(response.body.api_key).toMatch(/^cairn_[A-Za-z0-9_-]{43,}$/);
    expect(response.body.api_key).not.toBe(self.apiKey);
    expect(await status(server, "/agents/me", self)).toBe(401);
    expect(await status(server, "/agents/me", { agentId: "rotator", apiKey: response.body.api_key })).toBe(200);
  });

  it("by another non-owner agent → 403 and the key is unchanged", async ({ server }) => {
    const target = await server.agent("rot-target");
    const other = await server.agent("rot-other");
    const response = await rotate(server, "rot-target", other);
    expect(response.status).toBe(403);
    expect(response.text).not.toContain("cairn_");
    expect((await rotate(server, "rot-target", server.archivist)).status).toBe(403);
    expect(await status(server, "/agents/me", target)).toBe(200);
  });

  it("by the owner → works", async ({ server }) => {
    const target = await server.agent("owned");
    const response = await rotate(server, "owned", server.owner);
    expect(response.status).toBe(200);
    expect(await status(server, "/agents/me", target)).toBe(401);
    expect(await status(server, "/agents/me", { agentId: "owned", apiKey: response.body.api_key })).toBe(200);
  });

  it("of an unknown or deleted agent by the owner → 404", async ({ server }) => {
    expect((await rotate(server, "no-such-agent", server.owner)).status).toBe(404);
    const gone = await server.agent("rot-gone");
    expect((await server.request("/agents/me", { as: gone, method: "DELETE" })).status).toBe(204);
    expect((await rotate(server, "rot-gone", server.owner)).status).toBe(404);
    expect(await status(server, "/agents/me", gone)).toBe(401);
  });

  it("of the archivist by the owner updates credentials.json", async ({ server }) => {
    const path = join(server.dataDir, "credentials.json");
    const response = await rotate(server, "archivist", server.owner);
    expect(response.status).toBe(200);
    const file = JSON.parse(readFileSync(path, "utf8")) as { agents: Record<string, { api_key: string; role: string }> };
    expect(file.agents.archivist).toMatchObject({ api_key: response.body.api_key, role: "archivist" });
    expect(file.agents.human?.api_key).toBe(server.owner.apiKey);
    expect(await status(server, "/agents/me", server.archivist)).toBe(401);
    expect(await status(server, "/agents/me", { agentId: "archivist", apiKey: response.body.api_key })).toBe(200);
  });
});

describe("POST /agents/human/rotate-key by the owner itself", () => {
  it("updates credentials.json and keeps it 0600", async () => {
    const server = await startTestServer();
    try {
      const path = join(server.dataDir, "credentials.json");
      const response = await server.request<{ api_key: string }>("/agents/human/rotate-key", { as: server.owner, method: "POST" });
      expect(response.status).toBe(200);
      const file = JSON.parse(readFileSync(path, "utf8")) as { agents: Record<string, { api_key: string }> };
      expect(file.agents.human?.api_key).toBe(response.body.api_key);
      expect(file.agents.archivist?.api_key).toBe(server.archivist.apiKey);
      expect(statSync(path).mode & 0o777).toBe(0o600);
      expect(await status(server, "/agents/me", server.owner)).toBe(401);
      expect(await status(server, "/agents/me", { agentId: "human", apiKey: response.body.api_key })).toBe(200);
    } finally {
      await server.close();
    }
  });
});
