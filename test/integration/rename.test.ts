import { describe, expect, it } from "vitest";
import { startTestServer } from "../helpers/server.js";

describe("renaming an agent", () => {
  it("moves everything it owns to the new id, in one go: entries, tasks, comments, messages, memberships, handoffs, events", async () => {
    const server = await startTestServer();
    try {
      const old = await server.agent("old-name");
      const peer = await server.agent("peer");
      await server.request("/projects", { as: old, body: { name: "renames" } });
      await server.request("/projects/renames/join", { method: "POST", as: peer });
      const entry = await server.request<{ id: string }>("/memory", { as: old, body: { content: "written before the rename" } });
      const secret = await server.request<{ id: string }>("/memory", { as: old, body: { content: "private before the rename", scope: "agent" } });
      const created = await server.request<{ id: string }>("/tasks", { as: old, body: { title: "made before the rename" } });
      const claimed = await server.request<{ id: string }>("/tasks", { as: peer, body: { title: "claimed before the rename" } });
      await server.request(`/tasks/${claimed.body.id}/claim`, { as: old, body: { comment: "mine" } });
      const sent = await server.request<{ id: string }>("/messages", { as: old, body: { to: "peer", body: "from the old name" } });
      const received = await server.request<{ id: string }>("/messages", { as: peer, body: { to: "old-name", body: "to the old name" } });
      await server.request("/sessions/handoff", { as: old, body: { summary: "before the rename" } });

      const renamed = await server.request<{ agent_id: string }>("/agents/me", { method: "PATCH", as: old, body: { agent_id: "new-name" } });
      expect(renamed.status).toBe(200);
      const fresh = { agentId: "new-name", apiKey: old.apiKey };
      expect((await server.request("/agents/me", { as: old })).status).toBe(401);

      expect((await server.request<{ agent_id: string }>(`/memory/${entry.body.id}`, { as: fresh })).body.agent_id).toBe("new-name");
      expect((await server.request(`/memory/${secret.body.id}`, { as: fresh })).status).toBe(200);
      expect((await server.request<{ created_by: string }>(`/tasks/${created.body.id}`, { as: fresh })).body.created_by).toBe("new-name");
      const task = await server.request<{ assigned_to: string }>(`/tasks/${claimed.body.id}`, { as: fresh });
      expect(task.body.assigned_to).toBe("new-name");
      const log = await server.request<{ agent_id: string }[]>(`/tasks/${claimed.body.id}/comments`, { as: fresh });
      expect(log.body.map((comment) => comment.agent_id)).toEqual(["new-name"]);
      expect((await server.request(`/tasks/${claimed.body.id}/complete`, { as: fresh, body: {} })).status).toBe(200);
      expect((await server.request<{ from: string }>(`/messages/${sent.body.id}`, { as: fresh })).body.from).toBe("new-name");
      const inbox = await server.request<{ id: string; to: string }[]>("/messages/inbox", { as: fresh });
      expect(inbox.body.map((message) => message.id)).toEqual([received.body.id]);
      expect(inbox.body[0]?.to).toBe("new-name");
      const me = await server.request<{ projects: string[] }>("/agents/me", { as: fresh });
      expect(me.body.projects).toEqual(["renames"]);
      const project = await server.request<{ owner: string }[]>("/projects", { as: fresh });
      expect(project.body[0]?.owner).toBe("new-name");
      const pack = await server.request<{ last_handoff: { agent_id: string } }>("/sessions/handoff", { as: fresh });
      expect(pack.body.last_handoff.agent_id).toBe("new-name");
      const events = await server.request<{ agent_id: string }[]>("/events?since=seq:0&limit=500", { as: server.owner });
      expect(events.body.filter((event) => event.agent_id === "old-name")).toEqual([]);

      // The old id owns nothing: a newcomer taking it finds none of it.
      const performance = await server.request<{ agent_id: string }[]>("/agents/performance", { as: fresh });
      expect(performance.body.map((row) => row.agent_id)).toEqual(["new-name"]);
      const reborn = await server.request<{ api_key: string }>("/agents/self-register", { body: { agent_id: "old-name" } });
      expect(reborn.status).toBe(201);
      const newcomer = { agentId: "old-name", apiKey: reborn.body.api_key };
      expect((await server.request(`/memory/${secret.body.id}`, { as: newcomer })).status).toBe(404);
      const itself = await server.request<{ projects: string[]; claimed_tasks: string[] }>("/agents/me", { as: newcomer });
      expect(itself.body).toMatchObject({ projects: [], claimed_tasks: [] });
      expect((await server.request<unknown[]>("/messages", { as: newcomer })).body).toEqual([]);
    } finally {
      await server.close();
    }
  });
});
