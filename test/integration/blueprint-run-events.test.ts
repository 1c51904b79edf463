import { describe, expect } from "vitest";
import { test } from "../helpers/fixtures.js";
import { eventsOf, type EventRecord } from "../helpers/memory.js";
import type { Credentials, TestServer } from "../helpers/server.js";
import type { BlueprintRun } from "../../src/wire/blueprint-runs.js";
import type { Task, TaskComment } from "../../src/wire/tasks.js";

// docs/events.md: every change a blueprint run makes to its tasks is announced as the same change
// made through /tasks would be — created tasks, dependencies a fan-out adds or `on_fail: continue`
// removes, titles rendered again once an output is known, a timer gate's due date.

const it = test.extend("alice", ({ server }) => server.agent("alice")).extend("bob", ({ server }) => server.agent("bob"));

type Node = Record<string, unknown> & { id: string; title: string };

async function run(server: TestServer, as: Credentials, name: string, nodes: Node[]): Promise<BlueprintRun> {
  const saved = await server.request("/blueprints", { as, body: { name, title: name, project: null, nodes } });
  expect(saved.status, saved.text).toBe(201);
  const started = await server.request<BlueprintRun>(`/blueprints/${name}/instantiate`, { as, body: { project: null, params: {} } });
  expect(started.status, started.text).toBe(201);
  return started.body;
}

const taskOf = (state: BlueprintRun, key: string): string => {
  const node = state.nodes.find((candidate) => candidate.key === key);
  if (!node?.task_id) throw new Error(`no task for ${key} in ${JSON.stringify(state.nodes)}`);
  return node.task_id;
};

async function finish(server: TestServer, as: Credentials, id: string, outcome: "complete" | "fail", output?: unknown): Promise<void> {
  expect((await server.request(`/tasks/${id}/claim`, { as, body: {} })).status).toBe(200);
  const done = await server.request<Task>(`/tasks/${id}/${outcome}`, { as, body: output === undefined ? {} : { output } });
  expect(done.status, done.text).toBe(200);
}

const of = (events: EventRecord[], taskId: string): EventRecord[] => events.filter((event) => event.payload.task_id === taskId);

async function comment(server: TestServer, as: Credentials, taskId: string, commentId: unknown): Promise<string | undefined> {
  const comments = await server.request<TaskComment[]>(`/tasks/${taskId}/comments`, { as });
  return comments.body.find((entry) => entry.id === commentId)?.comment;
}

describe("a blueprint run's changes to its tasks", () => {
  it("announces a fan-out's tasks, the fan-in's new dependencies and a title rendered again", async ({ server, alice, bob }) => {
    const state = await run(server, alice, "fan", [
      { id: "list", title: "List the targets", assign_to: "bob", output_schema: { type: "object", properties: { targets: { type: "array", items: { type: "string" } } } } },
      { id: "publish", title: "Publish {{item}}", needs: ["list"], foreach: { from: "list.output.targets", max_items: 50 } },
      { id: "announce", title: "Announce {{nodes.list.output.targets}}", needs: ["publish"] },
    ]);
    const started = await eventsOf(server, "blueprint.run.started");
    expect(started.map((event) => event.payload)).toEqual([{ run_id: state.id, blueprint_id: state.blueprint.id, name: "fan", version: 1, project: null }]);
    const announce = taskOf(state, "announce");
    const titleBefore = (await server.request<Task>(`/tasks/${announce}`, { as: alice })).body.title;
    await finish(server, bob, taskOf(state, "list"), "complete", { targets: ["web", "cdn"] });

    const after = (await server.request<BlueprintRun>(`/blueprints/runs/${state.id}`, { as: alice })).body;
    const published = [taskOf(after, "publish[0]"), taskOf(after, "publish[1]")];
    const created = await eventsOf(server, "task.created");
    for (const id of published) {
      // Created by the run's creator, announced by the agent whose completion made them.
      expect(of(created, id).map((event) => [event.agent_id, event.payload.created_by, event.payload.status])).toEqual([["bob", "alice", "open"]]);
    }

    const updates = of(await eventsOf(server, "task.updated"), announce);
    expect(updates.map((event) => event.payload.changed)).toEqual([["depends_on"], ["title"]]);
    expect(await comment(server, alice, announce, updates[0]?.payload.comment_id)).toBe(`dependencies added: ${published.join(", ")}`);
    const task = (await server.request<Task>(`/tasks/${announce}`, { as: alice })).body;
    expect(task.title).not.toBe(titleBefore);
    expect(task.title).toBe('Announce ["web","cdn"]');
    expect(task.depends_on).toEqual([...published, taskOf(state, "list")].sort());
  });

  it("announces the dependency `on_fail: continue` removes, then the dependent freed", async ({ server, alice }) => {
    const state = await run(server, alice, "lenient", [
      { id: "optional", title: "Optional", on_fail: "continue" },
      { id: "main", title: "Main", needs: ["optional"] },
    ]);
    const [optional, main] = [taskOf(state, "optional"), taskOf(state, "main")];
    await finish(server, alice, optional, "fail");
    const updates = of(await eventsOf(server, "task.updated"), main);
    expect(updates.map((event) => event.payload.changed)).toEqual([["depends_on"]]);
    expect(await comment(server, alice, main, updates[0]?.payload.comment_id)).toBe(`dependency removed: ${optional}`);
    const unblocked = of(await eventsOf(server, "task.unblocked"), main);
    expect(unblocked.map((event) => event.payload.unblocked_by)).toEqual([optional]);
    expect(unblocked[0]?.seq).toBeGreaterThan(updates[0]?.seq ?? Infinity);
  });

  it("announces the due date a timer gate is given when its needs are done", async ({ server, alice }) => {
    const state = await run(server, alice, "later", [
      { id: "prepare", title: "Prepare" },
      { id: "cool", title: "Cool down", needs: ["prepare"], gate: { kind: "timer", after: "PT1H" } },
    ]);
    const gate = taskOf(state, "cool");
    expect(of(await eventsOf(server, "task.updated"), gate)).toEqual([]);
    const before = Date.now();
    await finish(server, alice, taskOf(state, "prepare"), "complete");
    const updates = of(await eventsOf(server, "task.updated"), gate);
    expect(updates.map((event) => [event.agent_id, event.payload.changed])).toEqual([["alice", ["due_at"]]]);
    const due = Date.parse((await server.request<Task>(`/tasks/${gate}`, { as: alice })).body.due_at ?? "");
    expect(due - before).toBeGreaterThanOrEqual(3_600_000 - 1_000);
    expect(due - Date.now()).toBeLessThanOrEqual(3_600_000);
  });
});
