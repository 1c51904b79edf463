import { describe, expect } from "vitest";
import type { RecommendedTask, Task, TaskComment } from "../../src/wire/tasks.js";
import { it, test } from "../helpers/fixtures.js";
import { startTestServer, type Credentials, type ErrorBody, type TestServer } from "../helpers/server.js";
import { eventually } from "../helpers/wait.js";

const create = async (server: TestServer, as: Credentials, body: Record<string, unknown>): Promise<Task> => {
  const response = await server.request<Task>("/tasks", { as, body });
  expect(response.status, response.text).toBe(201);
  return response.body;
};

const act = (server: TestServer, as: Credentials, id: string, action: string, body: Record<string, unknown> = {}) =>
  server.request<Task & ErrorBody>(`/tasks/${id}/${action}`, { as, body });

describe("the task lifecycle (five agents)", () => {
  const it = test
    .extend("ann", ({ server }) => server.agent("ann"))
    .extend("ben", ({ server }) => server.agent("ben"))
    .extend("cid", ({ server }) => server.agent("cid"))
    .extend("dee", ({ server }) => server.agent("dee"))
    .extend("eve", ({ server }) => server.agent("eve"));

  it("creates a task open and unassigned, with defaults", async ({ server, ann }) => {
    const task = await create(server, ann, { title: "write the parser", tags: ["parser", "parser"] });
    expect(task).toMatchObject({ status: "open", created_by: "ann", assigned_to: null, priority: "normal", tags: ["parser"], blocked: false });
  });

  it("walks the seed's state table: claim → unclaim → claim → complete, and claim → fail", async ({ server, ann, ben, cid, dee }) => {
    const task = await create(server, ann, { title: "state table" });
    const claimed = await act(server, ben, task.id, "claim", { comment: "on it" });
    expect(claimed.status).toBe(200);
    expect(claimed.body).toMatchObject({ status: "claimed", assigned_to: "ben" });
    expect(claimed.body.claimed_at).not.toBeNull();
    expect(claimed.body.lease_expires_at).not.toBeNull();

    expect((await act(server, cid, task.id, "unclaim")).status).toBe(403);
    const released = await act(server, ben, task.id, "unclaim", { comment: "blocked on review" });
    expect(released.body).toMatchObject({ status: "open", assigned_to: null });

    await act(server, cid, task.id, "claim");
    expect((await act(server, ben, task.id, "complete")).status).toBe(403);
    const done = await act(server, cid, task.id, "complete", { comment: "shipped", output: { pr: 42, files: ["a.ts"] } });
    expect(done.body).toMatchObject({ status: "completed", assigned_to: "cid", result: { pr: 42, files: ["a.ts"] } });
    expect(done.body.completed_at).not.toBeNull();
    expect((await act(server, cid, task.id, "complete")).body.detail).toBe("task not claimed");

    const other = await create(server, ann, { title: "doomed" });
    await act(server, dee, other.id, "claim");
    const failed = await act(server, dee, other.id, "fail", { comment: "cannot reproduce" });
    expect(failed.body.status).toBe("failed");
  });

  it("checks unclaim, complete and fail in order: visible (404), claimed (409), assignee (403)", async ({ server, ann, ben, cid }) => {
    const task = await create(server, ann, { title: "ordering" });
    expect((await act(server, ben, "00000000-0000-4000-8000-000000000000", "complete")).status).toBe(404);
    const notClaimed = await act(server, ben, task.id, "complete");
    expect(notClaimed.status).toBe(409);
    expect(notClaimed.body.detail).toBe("task not claimed");
    await act(server, ben, task.id, "claim");
    expect((await act(server, cid, task.id, "fail")).status).toBe(403);
  });

  it("lets an owner release anyone's claim: open again, an unclaim comment 'released by <owner>' that keeps the owner's reason, and task.unclaimed", async ({ server, ann, ben, cid, dee, eve }) => {
    const owner = server.owner;
    const task = await create(server, ann, { title: "stuck with a vanished agent" });
    expect((await act(server, owner, task.id, "unclaim")).body.detail).toBe("task not claimed");
    await act(server, ben, task.id, "claim");
    const released = await act(server, owner, task.id, "unclaim");
    expect(released.status).toBe(200);
    expect(released.body).toMatchObject({ status: "open", assigned_to: null, claimed_at: null, lease_expires_at: null });

    await act(server, cid, task.id, "claim");
    expect((await act(server, owner, task.id, "unclaim", { comment: "cid is on leave" })).body.status).toBe("open");
    const log = await server.request<TaskComment[]>(`/tasks/${task.id}/comments`, { as: ann });
    expect(log.body.filter((entry) => entry.kind === "unclaim").map((entry) => [entry.agent_id, entry.comment])).toEqual([
      [owner.agentId, `released by ${owner.agentId}`],
      [owner.agentId, `released by ${owner.agentId}: cid is on leave`],
    ]);
    const events = await server.request<{ type: string; agent_id: string; payload: { task_id: string } }[]>("/events?since=seq:0&type=task.unclaimed&limit=500", { as: ann });
    expect(events.body.filter((event) => event.payload.task_id === task.id).map((event) => event.agent_id)).toEqual([owner.agentId, owner.agentId]);
    // Any other agent still may not.
    await act(server, dee, task.id, "claim");
    expect((await act(server, eve, task.id, "unclaim")).status).toBe(403);
  });

  it("records every lifecycle step in the comment log, in order, with its kind", async ({ server, ann, ben, cid, dee, eve }) => {
    const task = await create(server, ann, { title: "logged" });
    await act(server, ben, task.id, "claim", { comment: "taking it" });
    await server.request(`/tasks/${task.id}/comments`, { as: cid, body: { comment: "need help?" } });
    await act(server, ben, task.id, "unclaim");
    await act(server, eve, task.id, "claim");
    await act(server, eve, task.id, "complete", { comment: "done" });
    await act(server, ann, task.id, "reopen", { comment: "not quite" });
    const log = await server.request<TaskComment[]>(`/tasks/${task.id}/comments`, { as: dee });
    expect(log.body.map((entry) => [entry.kind, entry.agent_id, entry.comment])).toEqual([
      ["claim", "ben", "taking it"],
      ["comment", "cid", "need help?"],
      ["unclaim", "ben", ""],
      ["claim", "eve", ""],
      ["complete", "eve", "done"],
      ["reopen", "ann", "not quite"],
    ]);
  });

  it("lets only the creator or an owner reopen a closed task, and only a closed one", async ({ server, ann, ben }) => {
    const task = await create(server, ann, { title: "reopenable" });
    expect((await act(server, ann, task.id, "reopen")).status).toBe(409);
    await act(server, ben, task.id, "claim");
    await act(server, ben, task.id, "complete");
    expect((await act(server, ben, task.id, "reopen")).status).toBe(403);
    expect((await act(server, server.owner, task.id, "reopen")).body.status).toBe("open");
  });

  it("reserves a task for its assigned_to: others get 403, the reserved agent claims it", async ({ server, ann, ben, dee }) => {
    const task = await create(server, ann, { title: "for dee only", assigned_to: "dee" });
    expect(task.assigned_to).toBe("dee");
    const refused = await act(server, ben, task.id, "claim");
    expect(refused.status).toBe(403);
    expect(refused.body.detail).toBe("task is reserved for another agent");
    expect((await act(server, dee, task.id, "claim")).status).toBe(200);
    // Released, it stays reserved.
    expect((await act(server, dee, task.id, "unclaim")).body.assigned_to).toBe("dee");
    expect((await server.request("/tasks", { as: ann, body: { title: "x", assigned_to: "nobody-here" } })).status).toBe(404);
  });

  it("keeps a task blocked until its dependency completes", async ({ server, ann, ben, cid }) => {
    const first = await create(server, ann, { title: "foundation" });
    const second = await create(server, ann, { title: "walls", depends_on: [first.id] });
    expect(second).toMatchObject({ blocked: true, depends_on: [first.id] });
    const blocked = await act(server, ben, second.id, "claim");
    expect(blocked.status).toBe(409);
    expect(blocked.body.detail).toBe("task is blocked");
    const unblockedBefore = await server.request<Task[]>("/tasks?unblocked=true&limit=500", { as: ben });
    expect(unblockedBefore.body.map((task) => task.id)).not.toContain(second.id);
    await act(server, cid, first.id, "claim");
    await act(server, cid, first.id, "complete");
    const after = await server.request<Task>(`/tasks/${second.id}`, { as: ben });
    expect(after.body.blocked).toBe(false);
    const unblocked = await server.request<Task[]>("/tasks?unblocked=true&limit=500", { as: ben });
    expect(unblocked.body.map((task) => task.id)).toContain(second.id);
    expect((await act(server, ben, second.id, "claim")).status).toBe(200);
    const events = await server.request<{ type: string; payload: { task_id: string } }[]>("/events?since=seq:0&type=task.unblocked&limit=500", { as: ben });
    expect(events.body.map((event) => event.payload.task_id)).toContain(second.id);
  });

  it("refuses a dependency cycle with 409 and a self-dependency with 422; removes a dependency", async ({ server, ann }) => {
    const a = await create(server, ann, { title: "a" });
    const b = await create(server, ann, { title: "b", depends_on: [a.id] });
    const c = await create(server, ann, { title: "c", depends_on: [b.id] });
    const cycle = await server.request<ErrorBody>(`/tasks/${a.id}/dependencies`, { as: ann, body: { depends_on: c.id } });
    expect(cycle.status).toBe(409);
    expect(cycle.body.detail).toBe("dependency cycle");
    expect((await server.request(`/tasks/${a.id}/dependencies`, { as: ann, body: { depends_on: a.id } })).status).toBe(422);
    const added = await server.request<Task>(`/tasks/${c.id}/dependencies`, { as: ann, body: { depends_on: a.id } });
    expect(added.status).toBe(201);
    expect(added.body.depends_on).toEqual([a.id, b.id].sort());
    const removed = await server.request<Task>(`/tasks/${c.id}/dependencies/${b.id}`, { method: "DELETE", as: ann });
    expect(removed.status).toBe(200);
    expect(removed.body.depends_on).toEqual([a.id]);
    expect((await server.request(`/tasks/${c.id}/dependencies/${b.id}`, { method: "DELETE", as: ann })).status).toBe(404);
  });

  it("lets only those who may PATCH a task change its dependencies, and records each change as a comment", async ({ server, ann, ben, cid, dee }) => {
    const task = await create(server, ann, { title: "guarded dependencies" });
    const blocker = await create(server, ben, { title: "a stranger's blocker" });
    const other = await create(server, ann, { title: "another dependency" });
    const comments = async (): Promise<TaskComment[]> => (await server.request<TaskComment[]>(`/tasks/${task.id}/comments`, { as: ann })).body;

    // A stranger can neither block the task nor unblock it, and nothing is recorded.
    const blocked = await server.request<ErrorBody>(`/tasks/${task.id}/dependencies`, { as: ben, body: { depends_on: blocker.id } });
    expect(blocked.status).toBe(403);
    expect(blocked.body.code).toBe("FORBIDDEN");
    expect((await server.request<Task>(`/tasks/${task.id}`, { as: ann })).body).toMatchObject({ depends_on: [], blocked: false });

    expect((await server.request(`/tasks/${task.id}/dependencies`, { as: ann, body: { depends_on: blocker.id } })).status).toBe(201);
    const removedByStranger = await server.request<ErrorBody>(`/tasks/${task.id}/dependencies/${blocker.id}`, { method: "DELETE", as: cid });
    expect(removedByStranger.status).toBe(403);
    expect((await server.request<Task>(`/tasks/${task.id}`, { as: ann })).body.depends_on).toEqual([blocker.id]);

    // The owner role and the assignee may, like PATCH.
    expect((await server.request(`/tasks/${task.id}/dependencies`, { as: server.owner, body: { depends_on: other.id } })).status).toBe(201);
    expect((await server.request(`/tasks/${task.id}/dependencies/${other.id}`, { method: "DELETE", as: server.owner })).status).toBe(200);
    expect((await server.request(`/tasks/${task.id}/dependencies/${blocker.id}`, { method: "DELETE", as: ann })).status).toBe(200);
    expect(await comments()).toEqual([
      expect.objectContaining({ agent_id: "ann", kind: "comment", comment: `dependency added: ${blocker.id}` }),
      expect.objectContaining({ agent_id: "human", kind: "comment", comment: `dependency added: ${other.id}` }),
      expect.objectContaining({ agent_id: "human", kind: "comment", comment: `dependency removed: ${other.id}` }),
      expect.objectContaining({ agent_id: "ann", kind: "comment", comment: `dependency removed: ${blocker.id}` }),
    ]);
    await act(server, dee, task.id, "claim");
    expect((await server.request(`/tasks/${task.id}/dependencies`, { as: dee, body: { depends_on: other.id } })).status).toBe(201);
    expect((await comments()).at(-1)).toMatchObject({ agent_id: "dee", comment: `dependency added: ${other.id}` });
    // Adding what is already there changes nothing and records nothing.
    const count = (await comments()).length;
    expect((await server.request(`/tasks/${task.id}/dependencies`, { as: dee, body: { depends_on: other.id } })).status).toBe(201);
    expect(await comments()).toHaveLength(count);
  });

  it("lets the creator, the assignee or an owner PATCH an unfinished task", async ({ server, ann, ben }) => {
    const task = await create(server, ann, { title: "patchable" });
    expect((await server.request(`/tasks/${task.id}`, { method: "PATCH", as: ben, body: { priority: "high" } })).status).toBe(403);
    const patched = await server.request<Task>(`/tasks/${task.id}`, { method: "PATCH", as: ann, body: { priority: "high", tags: ["x"] } });
    expect(patched.body).toMatchObject({ priority: "high", tags: ["x"] });
    expect((await server.request(`/tasks/${task.id}`, { method: "PATCH", as: ann, body: { status: "completed" } })).status).toBe(422);
    await act(server, ben, task.id, "claim");
    expect((await server.request(`/tasks/${task.id}`, { method: "PATCH", as: ben, body: { title: "renamed" } })).status).toBe(200);
    await act(server, ben, task.id, "complete");
    expect((await server.request(`/tasks/${task.id}`, { method: "PATCH", as: ann, body: { title: "late" } })).status).toBe(409);
  });

  it("emits an event for every transition", async ({ server, ann, ben }) => {
    const task = await create(server, ann, { title: "evented" });
    await act(server, ben, task.id, "claim");
    await act(server, ben, task.id, "complete");
    await act(server, ann, task.id, "reopen");
    const events = await server.request<{ type: string; payload: { task_id: string } }[]>("/events?since=seq:0&type=task.*&limit=500", { as: ann });
    expect(events.body.filter((event) => event.payload.task_id === task.id).map((event) => event.type)).toEqual([
      "task.created",
      "task.claimed",
      "task.completed",
      "task.reopened",
    ]);
  });

  it("gives exactly one of 50 concurrent claimants the task, 20 times over", async ({ server, ann, ben, cid, dee, eve }) => {
    const agents = [ann, ben, cid, dee, eve];
    for (let round = 0; round < 20; round++) {
      const task = await create(server, ann, { title: `race ${round}` });
      const results = await Promise.all(Array.from({ length: 50 }, (_, index) => act(server, agents[index % 5] as Credentials, task.id, "claim")));
      expect(results.filter((result) => result.status === 200)).toHaveLength(1);
      expect(results.filter((result) => result.status === 409)).toHaveLength(49);
    }
  });
});

describe("recommendations and performance", () => {
  const it = test
    .extend("worker", ({ server }) => server.agent("worker"))
    .extend("boss", ({ server }) => server.agent("boss"));

  /** The worker's history: two completed "db" tasks, one failed "ui" task. */
  async function history(server: TestServer, worker: Credentials, boss: Credentials): Promise<void> {
    for (const [tag, outcome] of [["db", "complete"], ["db", "complete"], ["ui", "fail"]] as const) {
      const task = await create(server, boss, { title: `history ${tag}`, tags: [tag] });
      await act(server, worker, task.id, "claim");
      await act(server, worker, task.id, outcome);
    }
  }

  it("ranks by earned tag affinity, then priority, then age", async ({ server, worker, boss }) => {
    await history(server, worker, boss);
    const ui = await create(server, boss, { title: "ui work", tags: ["ui"], priority: "high" });
    const plainOld = await create(server, boss, { title: "plain old" });
    const plainHigh = await create(server, boss, { title: "plain high", priority: "high" });
    const db = await create(server, boss, { title: "db work", tags: ["db"], priority: "low" });
    const reservedElsewhere = await create(server, boss, { title: "not for worker", tags: ["db"], assigned_to: "boss" });
    const recommended = await server.request<RecommendedTask[]>("/tasks/recommended", { as: worker });
    const order = recommended.body.map((task) => task.id);
    expect(order).not.toContain(reservedElsewhere.id);
    expect(order.slice(0, 4)).toEqual([db.id, plainHigh.id, plainOld.id, ui.id]);
    expect(recommended.body[0]?.affinity).toBe(2);
    expect(recommended.body[3]?.affinity).toBe(-1);
  });

  it("reports per agent and per tag: completed, failed, success rate, median time", async ({ server, worker, boss }) => {
    await history(server, worker, boss);
    const all = await server.request<{ agent_id: string; completed: number; failed: number; success_rate: number; by_tag: { tag: string; completed: number }[] }[]>(
      "/agents/performance",
      { as: boss },
    );
    const mine = all.body.find((row) => row.agent_id === "worker");
    expect(mine).toMatchObject({ completed: 2, failed: 1 });
    expect(mine?.success_rate).toBeCloseTo(2 / 3, 3);
    expect(mine?.by_tag.find((row) => row.tag === "db")?.completed).toBe(2);
    const byTag = await server.request<{ agent_id: string; completed: number; failed: number }[]>("/agents/performance?tag=ui", { as: boss });
    expect(byTag.body.find((row) => row.agent_id === "worker")).toMatchObject({ completed: 0, failed: 1 });
  });
});

describe("claim leases", () => {
  it("releases the claim of a silent assignee, with an unclaim comment 'lease expired', and the task is claimable again", async () => {
    const server = await startTestServer({ TASK_LEASE_SECONDS: "1" }, { leaseSweepIntervalMs: 100 });
    try {
      const creator = await server.agent("creator");
      const sleeper = await server.agent("sleeper");
      const other = await server.agent("other");
      const task = await create(server, creator, { title: "lease" });
      expect((await act(server, sleeper, task.id, "claim")).status).toBe(200);
      const released = await eventually(async () => (await server.request<Task>(`/tasks/${task.id}`, { as: creator })).body.status === "open");
      expect(released).toBe(true);
      expect((await server.request<Task>(`/tasks/${task.id}`, { as: creator })).body.assigned_to).toBeNull();
      const log = await server.request<TaskComment[]>(`/tasks/${task.id}/comments`, { as: creator });
      expect(log.body.at(-1)).toMatchObject({ kind: "unclaim", comment: "lease expired", agent_id: "sleeper" });
      expect((await act(server, other, task.id, "claim")).status).toBe(200);
    } finally {
      await server.close();
    }
  });

  it("keeps the claim of an assignee that stays active (heartbeats and other requests)", async () => {
    // Beats every 400 ms for more than two leases. A lease of 4 s leaves 3.6 s for a beat delayed
    // by a busy machine (with 2 s, a CI run beside a native build lost the claim between beats).
    const server = await startTestServer({ TASK_LEASE_SECONDS: "4" }, { leaseSweepIntervalMs: 100 });
    try {
      const creator = await server.agent("creator");
      const busy = await server.agent("busy");
      const task = await create(server, creator, { title: "kept alive" });
      await act(server, busy, task.id, "claim");
      const until = Date.now() + 9000;
      while (Date.now() < until) {
        const beat = await act(server, busy, task.id, "heartbeat");
        expect(beat.body.status).toBe("claimed");
        await new Promise((resolve) => setTimeout(resolve, 400));
      }
      expect((await server.request<Task>(`/tasks/${task.id}`, { as: creator })).body.assigned_to).toBe("busy");
    } finally {
      await server.close();
    }
  });
});

/** How many tasks of each page a draining worker tries before it lists the open tasks again. */
const TRIES_PER_PAGE = 10;

describe("draining a queue of tasks", () => {
  // Twenty workers each try ten tasks of the same page of fifty: about four claims race for every
  // task. Trying every task of the page made the requests grow with workers × tasks (500 tasks,
  // some 10,000 claims, ran past 180 s on PostgreSQL beside other work); this is about 2,000.
  it("20 agents claim and complete 500 tasks: each completed exactly once, none lost", { timeout: 180_000 }, async ({ server }) => {
    const boss = await server.agent("queue-boss");
    for (let batch = 0; batch < 500; batch += 50) {
      await Promise.all(Array.from({ length: 50 }, (_, index) => create(server, boss, { title: `job ${batch + index}` })));
    }
    const workers = await Promise.all(Array.from({ length: 20 }, (_, index) => server.agent(`drain-${index}`)));
    const completedBy = new Map<string, string[]>();
    let refused = 0;
    await Promise.all(
      workers.map(async (worker) => {
        for (;;) {
          const open = await server.request<Task[]>("/tasks?status=open&limit=50", { as: worker });
          if (open.body.length === 0) return;
          // Each worker tries the page in its own order, as independent agents would: they still
          // collide often, but not on every single task.
          const page = open.body.map((task) => ({ task, order: Math.random() })).sort((a, b) => a.order - b.order);
          for (const { task } of page.slice(0, TRIES_PER_PAGE)) {
            const claim = await act(server, worker, task.id, "claim");
            if (claim.status !== 200) {
              refused++;
              continue;
            }
            const done = await act(server, worker, task.id, "complete");
            expect(done.status).toBe(200);
            completedBy.set(task.id, [...(completedBy.get(task.id) ?? []), worker.agentId]);
          }
        }
      }),
    );
    expect(completedBy.size).toBe(500);
    expect([...completedBy.values()].every((who) => who.length === 1)).toBe(true);
    // They did race: most tasks were tried by several workers.
    expect(refused).toBeGreaterThan(500);
    const completed = await server.request<Task[]>("/tasks?status=completed&limit=250", { as: boss });
    expect(completed.headers.get("x-next-cursor")).not.toBeNull();
    const open = await server.request<Task[]>("/tasks?status=open", { as: boss });
    expect(open.body).toEqual([]);
  });
});

describe("task counts", () => {
  const it = test
    .extend("worker", ({ server }) => server.agent("counter"))
    .extend("outsider", ({ server }) => server.agent("outsider"));

  it("counts visible tasks by status, blocked ones among the open, globally or per project", async ({ server, worker, outsider }) => {
    await server.request("/projects", { as: worker, body: { name: "countable" } });
    const first = await create(server, worker, { title: "first", project: null });
    await create(server, worker, { title: "waits for first", project: null, depends_on: [first.id] });
    const claimed = await create(server, worker, { title: "taken", project: null });
    await act(server, worker, claimed.id, "claim");
    const done = await create(server, worker, { title: "done", project: "countable" });
    await act(server, worker, done.id, "claim");
    await act(server, worker, done.id, "complete", { output: "ok" });
    const failed = await create(server, worker, { title: "broken", project: "countable" });
    await act(server, worker, failed.id, "claim");
    expect((await act(server, worker, failed.id, "fail", { comment: "no access" })).status).toBe(200);

    const all = await server.request("/tasks/counts", { as: worker });
    expect(all.body).toEqual({ open: 2, blocked: 1, claimed: 1, completed: 1, failed: 1 });
    expect((await server.request("/tasks/counts?project=", { as: worker })).body).toEqual({ open: 2, blocked: 1, claimed: 1, completed: 0, failed: 0 });
    expect((await server.request("/tasks/counts?project=countable", { as: worker })).body).toEqual({ open: 0, blocked: 0, claimed: 0, completed: 1, failed: 1 });
    // A project's tasks are counted only for those who see the project.
    expect((await server.request("/tasks/counts", { as: outsider })).body).toEqual({ open: 2, blocked: 1, claimed: 1, completed: 0, failed: 0 });
    await act(server, worker, first.id, "claim");
    await act(server, worker, first.id, "complete", { output: "ok" });
    expect((await server.request("/tasks/counts?project=", { as: worker })).body).toMatchObject({ open: 1, blocked: 0, claimed: 1, completed: 1 });
  });

  it("takes the listing's filters, and agrees with the listing under each", async ({ server, worker, outsider }) => {
    await create(server, outsider, { title: "tagged high", project: null, tags: ["ops"], priority: "high" });
    await create(server, outsider, { title: "tagged low", project: null, tags: ["ops"], priority: "low" });
    for (const filter of ["agent=outsider", "tag=ops", "priority=high", "tag=ops&priority=low", "agent=counter&project="]) {
      const counts = (await server.request<Record<string, number>>(`/tasks/counts?${filter}`, { as: worker })).body;
      for (const status of ["open", "claimed", "completed", "failed"]) {
        const listed = await server.request<Task[]>(`/tasks?${filter}&status=${status}&limit=500`, { as: worker });
        expect(counts[status], `${filter} ${status}`).toBe(listed.body.length);
      }
    }
    expect((await server.request("/tasks/counts?tag=ops", { as: worker })).body).toEqual({ open: 2, blocked: 0, claimed: 0, completed: 0, failed: 0 });
    expect((await server.request("/tasks/counts?priority=urgent", { as: worker })).status).toBe(422);
  });
});
