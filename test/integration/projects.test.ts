import { describe, expect } from "vitest";
import type { Project } from "../../src/wire/projects.js";
import { test } from "../helpers/fixtures.js";
import type { ErrorBody } from "../helpers/server.js";

const it = test
  .extend("alice", ({ server }) => server.agent("alice"))
  .extend("bob", ({ server }) => server.agent("bob"))
  .extend("carol", ({ server }) => server.agent("carol"));

describe("projects and their boundaries", () => {
  it("creates a project from a name: the id is its slug, the creator owns and joins it", async ({ server, alice, bob }) => {
    const created = await server.request<Project>("/projects", { as: alice, body: { name: "Apollo Launch!", description: "rockets" } });
    expect(created.status).toBe(201);
    expect(created.body).toMatchObject({ id: "apollo-launch", name: "Apollo Launch!", owner: "alice", member_count: 1 });
    const me = await server.request<{ current_project: string; projects: string[] }>("/agents/me", { as: alice });
    expect(me.body.current_project).toBe("apollo-launch");
    expect(me.body.projects).toEqual(["apollo-launch"]);
    const again = await server.request<ErrorBody>("/projects", { as: bob, body: { name: "apollo launch" } });
    expect(again.status).toBe(409);
  });

  it("lists every project, and the caller's own under /projects/mine", async ({ server, alice, bob, carol }) => {
    await server.request("/projects", { as: alice, body: { name: "Apollo Launch!" } });
    await server.request("/projects", { as: bob, body: { name: "Bobs Garden" } });
    const all = await server.request<Project[]>("/projects", { as: carol });
    expect(all.body.map((project) => project.id)).toEqual(expect.arrayContaining(["apollo-launch", "bobs-garden"]));
    const mine = await server.request<Project[]>("/projects/mine", { as: bob });
    expect(mine.body.map((project) => project.id)).toEqual(["bobs-garden"]);
  });

  it("hides a project's memory, tasks and messages from non-members, and refuses their writes with 403", async ({ server, alice, carol }) => {
    await server.request("/projects", { as: alice, body: { name: "secret" } });
    const entry = await server.request<{ id: string }>("/memory", { as: alice, body: { content: "the launch code is in the vault", project: "secret" } });
    expect(entry.status).toBe(201);
    const taskCreated = await server.request<{ id: string }>("/tasks", { as: alice, body: { title: "open the vault", project: "secret" } });
    expect(taskCreated.status).toBe(201);
    const note = await server.request<{ id: string }>("/messages", { as: alice, body: { to: "project:secret", body: "vault at noon" } });
    expect(note.status).toBe(201);

    expect((await server.request(`/memory/${entry.body.id}`, { as: carol })).status).toBe(404);
    expect((await server.request(`/tasks/${taskCreated.body.id}`, { as: carol })).status).toBe(404);
    expect((await server.request(`/messages/${note.body.id}`, { as: carol })).status).toBe(404);
    const list = await server.request<{ id: string }[]>("/memory?limit=500", { as: carol });
    expect(list.body.map((row) => row.id)).not.toContain(entry.body.id);
    const search = await server.request<{ id: string }[]>("/memory/search?q=launch%20code%20vault", { as: carol });
    expect(search.body.map((row) => row.id)).not.toContain(entry.body.id);
    const delta = await server.request<{ id: string }[]>("/memory/delta?since=2000-01-01T00:00:00Z&limit=500", { as: carol });
    expect(delta.status).toBe(200);
    expect(delta.body.map((row) => row.id)).not.toContain(entry.body.id);
    const tasks = await server.request<{ id: string }[]>("/tasks?limit=500", { as: carol });
    expect(tasks.body.map((row) => row.id)).not.toContain(taskCreated.body.id);
    const events = await server.request<{ project: string | null }[]>("/events?since=seq:0&limit=500", { as: carol });
    expect(events.body.filter((event) => event.project === "secret")).toEqual([]);

    const write = await server.request<ErrorBody>("/memory", { as: carol, body: { content: "sneaking in", project: "secret" } });
    expect(write.status).toBe(403);
    expect(write.body.detail).toBe("not a member of this project");
    expect((await server.request("/tasks", { as: carol, body: { title: "sneak", project: "secret" } })).status).toBe(403);
    expect((await server.request("/messages", { as: carol, body: { to: "project:secret", body: "hi" } })).status).toBe(403);
    expect((await server.request("/projects/secret/members", { as: carol })).status).toBe(404);

    // After joining, everything is there.
    const joined = await server.request<Project>("/projects/secret/join", { method: "POST", as: carol });
    expect(joined.status).toBe(200);
    expect((await server.request(`/memory/${entry.body.id}`, { as: carol })).status).toBe(200);
    expect((await server.request(`/tasks/${taskCreated.body.id}`, { as: carol })).status).toBe(200);
    const deltaAfter = await server.request<{ id: string }[]>("/memory/delta?since=2000-01-01T00:00:00Z&limit=500", { as: carol });
    expect(deltaAfter.body.map((row) => row.id)).toContain(entry.body.id);
    const members = await server.request<{ agent_id: string; project_owner: boolean; joined_at: string }[]>("/projects/secret/members", { as: carol });
    // Members only: the owner and archivist roles see the project without joining, and are not listed.
    expect(members.body.map((row) => row.agent_id)).toEqual(["alice", "carol"]);
    expect(members.body.map((row) => Object.keys(row).sort())).toEqual(Array(2).fill(["agent_id", "joined_at", "project_owner", "role"]));
    expect(members.body.find((row) => row.agent_id === "alice")?.project_owner).toBe(true);
    const asOwner = await server.request<{ agent_id: string }[]>("/projects/secret/members", { as: server.owner });
    expect(asOwner.body.map((row) => row.agent_id)).toEqual(["alice", "carol"]);
    // Messages sent before joining were not addressed to the newcomer.
    expect((await server.request(`/messages/${note.body.id}`, { as: carol })).status).toBe(404);
  });

  it("writes go to the current project when none is named, and leaving makes the project invisible again", async ({ server, bob }) => {
    await server.request("/projects", { as: bob, body: { name: "leaving" } });
    const entry = await server.request<{ id: string; project: string }>("/memory", { as: bob, body: { content: "current project default" } });
    expect(entry.body.project).toBe("leaving");
    const global = await server.request<{ project: string | null }>("/memory", { as: bob, body: { content: "explicitly global note", project: null } });
    expect(global.body.project).toBeNull();
    expect((await server.request("/projects/leaving/leave", { method: "DELETE", as: bob })).status).toBe(204);
    expect((await server.request(`/memory/${entry.body.id}`, { as: bob })).status).toBe(404);
    const me = await server.request<{ current_project: string | null }>("/agents/me", { as: bob });
    expect(me.body.current_project).toBeNull();
  });

  it("a write into a project that does not exist is 404", async ({ server }) => {
    const response = await server.request<ErrorBody>("/memory", { as: server.owner, body: { content: "nowhere", project: "no-such-project" } });
    expect(response.status).toBe(404);
  });

  it("lets only the project's owner clear it, and reports what it removed", async ({ server, alice, bob }) => {
    await server.request("/projects", { as: alice, body: { name: "clearing" } });
    await server.request("/projects/clearing/join", { method: "POST", as: bob });
    await server.request("/memory", { as: alice, body: { content: "first clearing note", project: "clearing" } });
    await server.request("/memory", { as: bob, body: { content: "second clearing note", project: "clearing" } });
    const privateEntry = await server.request<{ id: string }>("/memory", {
      as: bob,
      body: { content: "bob's own private note", project: "clearing", scope: "agent" },
    });
    await server.request("/tasks", { as: alice, body: { title: "a clearing task", project: "clearing" } });
    await server.request("/messages", { as: alice, body: { to: "project:clearing", body: "clearing soon" } });

    const byMember = await server.request<ErrorBody>("/projects/clearing/clear", { as: bob, body: { memory: true } });
    expect(byMember.status).toBe(403);

    const cleared = await server.request<{ memory: number; tasks: number; messages: number }>("/projects/clearing/clear", {
      as: alice,
      body: { memory: true, tasks: true, messages: true },
    });
    expect(cleared.status).toBe(200);
    // Decisions stay unless the clear asks for them (decisions.test.ts).
    expect(cleared.body).toEqual({ memory: 2, tasks: 1, messages: 1, decisions: 0 });
    const left = await server.request<unknown[]>("/memory?project=clearing&scope=project", { as: alice });
    expect(left.body).toEqual([]);
    expect((await server.request<unknown[]>("/tasks?project=clearing", { as: alice })).body).toEqual([]);
    // Private entries stay their authors'.
    expect((await server.request(`/memory/${privateEntry.body.id}`, { as: bob })).status).toBe(200);
    const events = await server.request<{ type: string; payload: { reason?: string } }[]>("/events?since=seq:0&type=memory.deleted&limit=500", {
      as: alice,
    });
    expect(events.body.filter((event) => event.payload.reason === "cleared")).toHaveLength(2);
  });
});
