import { describe, expect } from "vitest";
import type { ContextPack as Pack } from "../../src/wire/sessions.js";
import { test } from "../helpers/fixtures.js";
import type { Credentials, ErrorBody, TestServer } from "../helpers/server.js";

describe("session handoffs", () => {
  const it = test
    .extend("agent", ({ server }) => server.agent("sessioner"))
    .extend("teammate", ({ server }) => server.agent("teammate"));

  it("starts the next session with one call: handoff, memory delta, unread messages, claimed tasks, directives", async ({ server, agent, teammate }) => {
    // Session 1: read everything so far, work, hand off.
    await server.request("/sessions/handoff", { as: agent });
    const task = await server.request<{ id: string }>("/tasks", { as: teammate, body: { title: "carry over" } });
    await server.request(`/tasks/${task.body.id}/claim`, { as: agent, body: {} });
    const saved = await server.request<{ id: string; agent_id: string }>("/sessions/handoff", {
      as: agent,
      body: { summary: "parser half done", in_progress: [task.body.id], next_steps: ["finish tokenizer"], host: "laptop" },
    });
    expect(saved.status).toBe(201);
    expect(saved.body.agent_id).toBe("sessioner");

    // Between sessions the team moves on.
    const note = await server.request<{ id: string }>("/memory", { as: teammate, body: { content: "tokenizer must handle tabs" } });
    await server.request("/messages", { as: teammate, body: { to: "sessioner", body: "see my note on tabs" } });
    const directive = await server.request<{ id: string }>("/memory", {
      as: server.owner,
      body: { content: "never push to main directly", type: "directive", project: null },
    });

    // Session 2.
    const pack = await server.request<Pack>("/sessions/handoff", { as: agent });
    expect(pack.status).toBe(200);
    expect(pack.body.last_handoff).toMatchObject({ summary: "parser half done", next_steps: ["finish tokenizer"], in_progress: [task.body.id] });
    const deltaIds = pack.body.memory_delta_since_last_seen.map((row) => row.id);
    expect(deltaIds).toEqual(expect.arrayContaining([note.body.id, directive.body.id]));
    expect(pack.body.unread_messages).toHaveLength(1);
    expect(pack.body.claimed_tasks.map((row) => row.id)).toEqual([task.body.id]);
    expect(pack.body.directives.map((row) => row.id)).toContain(directive.body.id);
    expect(pack.body.delta_truncated).toBe(false);

    // The cursor moved: nothing is new now.
    const next = await server.request<Pack>("/sessions/handoff", { as: agent });
    expect(next.body.memory_delta_since_last_seen).toEqual([]);
  });

  it("peek does not move the cursor", async ({ server, agent, teammate }) => {
    await server.request("/sessions/handoff", { as: agent });
    const entry = await server.request<{ id: string }>("/memory", { as: teammate, body: { content: "peek-visible change" } });
    const peeked = await server.request<Pack>("/sessions/handoff?peek=true", { as: agent });
    expect(peeked.body.memory_delta_since_last_seen.map((row) => row.id)).toEqual([entry.body.id]);
    const again = await server.request<Pack>("/sessions/handoff?peek=true", { as: agent });
    expect(again.body.memory_delta_since_last_seen.map((row) => row.id)).toEqual([entry.body.id]);
    const moved = await server.request<Pack>("/sessions/handoff", { as: agent });
    expect(moved.body.memory_delta_since_last_seen.map((row) => row.id)).toEqual([entry.body.id]);
    expect((await server.request<Pack>("/sessions/handoff", { as: agent })).body.memory_delta_since_last_seen).toEqual([]);
  });

  it("shows deletions as tombstones in the delta", async ({ server, agent, teammate }) => {
    const entry = await server.request<{ id: string }>("/memory", { as: teammate, body: { content: "short-lived note" } });
    await server.request("/sessions/handoff", { as: agent });
    await server.request(`/memory/${entry.body.id}`, { method: "DELETE", as: teammate });
    const pack = await server.request<Pack>("/sessions/handoff", { as: agent });
    expect(pack.body.memory_delta_since_last_seen).toEqual([expect.objectContaining({ id: entry.body.id, deleted_at: expect.any(String) as string })]);
  });

  it("caps the delta at the oldest 200 changes, newest last, and returns the rest on the next call", async ({ server, agent, teammate }) => {
    await server.request("/sessions/handoff", { as: agent });
    const ids: string[] = [];
    for (let index = 0; index < 205; index++) {
      const written = await server.request<{ id: string }>("/memory", { as: teammate, body: { content: `bulk change number ${index}`, allow_duplicate: true } });
      ids.push(written.body.id);
    }
    const pack = await server.request<Pack>("/sessions/handoff", { as: agent });
    expect(pack.body.delta_truncated).toBe(true);
    const first = pack.body.memory_delta_since_last_seen.map((row) => row.id);
    // A page ends on a whole millisecond, so it may hold slightly fewer than 200.
    expect(first.length).toBeGreaterThan(190);
    expect(first.length).toBeLessThanOrEqual(200);
    expect(first).toEqual(ids.slice(0, first.length));
    const rest = await server.request<Pack>("/sessions/handoff", { as: agent });
    expect(rest.body.delta_truncated).toBe(false);
    expect(rest.body.memory_delta_since_last_seen.map((row) => row.id)).toEqual(ids.slice(first.length));
  });

  it("refuses a handoff saved for another agent, and another agent's pack to anyone but an owner", async ({ server, agent, teammate }) => {
    await server.request("/sessions/handoff", { as: agent, body: { summary: "parser half done" } });
    const wrong = await server.request<ErrorBody>("/sessions/handoff", { as: agent, body: { agent_id: "teammate", summary: "x" } });
    expect(wrong.status).toBe(403);
    expect((await server.request("/sessions/handoff/sessioner", { as: teammate })).status).toBe(403);
    const byOwner = await server.request<Pack>("/sessions/handoff/sessioner", { as: server.owner });
    expect(byOwner.status).toBe(200);
    expect(byOwner.body.last_handoff?.summary).toBe("parser half done");
  });

  it("never shows an owner the agent's private entries or messages, nor moves its cursor", async ({ server, agent, teammate }) => {
    await server.request("/sessions/handoff", { as: agent });
    const privateEntry = await server.request<{ id: string }>("/memory", { as: agent, body: { content: "my private scratch", scope: "agent" } });
    await server.request("/messages", { as: teammate, body: { to: "sessioner", body: "for your eyes only" } });
    const byOwner = await server.request<Pack>("/sessions/handoff/sessioner", { as: server.owner });
    expect(byOwner.body.memory_delta_since_last_seen.map((row) => row.id)).not.toContain(privateEntry.body.id);
    expect(byOwner.body.unread_messages).toEqual([]);
    const own = await server.request<Pack>("/sessions/handoff", { as: agent });
    expect(own.body.memory_delta_since_last_seen.map((row) => row.id)).toContain(privateEntry.body.id);
  });
});

describe("every agent's last handoff", () => {
  const it = test
    .extend("first", ({ server }) => server.agent("first-hand"))
    .extend("second", ({ server }) => server.agent("second-hand"))
    .extend("gone", ({ server }) => server.agent("gone-hand"));
  const save = (server: TestServer, as: Credentials, summary: string) => server.request("/sessions/handoff", { as, body: { summary } });

  it("lists only the newest handoff of each agent still there, newest first, paged, for owners only", async ({ server, first, gone, second }) => {
    await save(server, first, "first, early");
    await save(server, second, "second, only");
    await save(server, gone, "from an agent deleted later");
    await save(server, first, "first, latest");
    expect((await server.request(`/agents/${gone.agentId}`, { as: server.owner, method: "DELETE" })).status).toBeLessThan(300);

    const all = await server.request<{ agent_id: string; summary: string }[]>("/sessions/handoffs", { as: server.owner });
    expect(all.status).toBe(200);
    expect(all.body.map((row) => [row.agent_id, row.summary])).toEqual([
      ["first-hand", "first, latest"],
      ["second-hand", "second, only"],
    ]);
    const page = await server.request<{ agent_id: string }[]>("/sessions/handoffs?limit=1", { as: server.owner });
    const cursor = page.headers.get("x-next-cursor");
    expect(page.body.map((row) => row.agent_id)).toEqual(["first-hand"]);
    expect(cursor).not.toBeNull();
    const rest = await server.request<{ agent_id: string }[]>(`/sessions/handoffs?limit=1&cursor=${cursor}`, { as: server.owner });
    expect(rest.body.map((row) => row.agent_id)).toEqual(["second-hand"]);
    expect(rest.headers.get("x-next-cursor")).toBeNull();
    expect((await server.request("/sessions/handoffs", { as: first })).status).toBe(403);
  });
});
