import { describe, expect } from "vitest";
import type { BlueprintRun as Run } from "../../src/wire/blueprint-runs.js";
import type { Task } from "../../src/wire/tasks.js";
import { test } from "../helpers/fixtures.js";
import type { Credentials, ErrorBody, TestServer } from "../helpers/server.js";

// CONTRACT §17: running blueprints — the plan on the board at once, contracts at completion,
// fan-out inside the completing transaction, gates, failure policies, cancel.

const it = test.extend("alice", ({ server }) => server.agent("alice")).extend("bob", ({ server }) => server.agent("bob"));

type Node = Record<string, unknown> & { id: string; title: string };

async function save(server: TestServer, as: Credentials, name: string, nodes: Node[], params: Record<string, unknown>[] = []): Promise<void> {
  const saved = await server.request("/blueprints", { as, body: { name, title: name, project: null, params, nodes } });
  expect(saved.status, saved.text).toBe(201);
}

async function start(server: TestServer, as: Credentials, name: string, params: Record<string, unknown> = {}, extra: Record<string, unknown> = {}): Promise<Run> {
  const run = await server.request<Run>(`/blueprints/${name}/instantiate`, { as, body: { project: null, params, ...extra } });
  expect(run.status, run.text).toBe(201);
  return run.body;
}

const getRun = async (server: TestServer, as: Credentials, id: string): Promise<Run> => (await server.request<Run>(`/blueprints/runs/${id}`, { as })).body;

const taskOf = (run: Run, key: string): string => {
  const node = run.nodes.find((candidate) => candidate.key === key);
  if (!node?.task_id) throw new Error(`no task for ${key} in ${JSON.stringify(run.nodes)}`);
  return node.task_id;
};

const getTask = async (server: TestServer, as: Credentials, id: string): Promise<Task> => (await server.request<Task>(`/tasks/${id}`, { as })).body;
const claim = (server: TestServer, as: Credentials, id: string) => server.request<Task>(`/tasks/${id}/claim`, { as, body: {} });
const complete = (server: TestServer, as: Credentials, id: string, output?: unknown) =>
  server.request<Task & ErrorBody>(`/tasks/${id}/complete`, { as, body: output === undefined ? {} : { output } });
const fail = (server: TestServer, as: Credentials, id: string) => server.request<Task>(`/tasks/${id}/fail`, { as, body: { comment: "broke" } });

async function finish(server: TestServer, as: Credentials, id: string, output?: unknown): Promise<void> {
  expect((await claim(server, as, id)).status).toBe(200);
  const done = await complete(server, as, id, output);
  expect(done.status, done.text).toBe(200);
}

const statuses = (run: Run): Record<string, string> => Object.fromEntries(run.nodes.map((node) => [node.key, node.status]));

describe("instantiating", () => {
  it("puts a four-node plan on the board at once, each task waiting on what its node needs", async ({ server, alice }) => {
    await save(server, alice, "diamond", [
      { id: "design", title: "Design {{params.feature}}" },
      { id: "api", title: "API for {{params.feature}}", needs: ["design"], tags: ["backend"] },
      { id: "ui", title: "UI for {{params.feature}}", needs: ["design"], priority: "high" },
      { id: "ship", title: "Ship {{params.feature}} ({{run.id}})", needs: ["api", "ui"] },
    ], [{ name: "feature", type: "string", required: true }]);
    const run = await start(server, alice, "diamond", { feature: "search" });
    expect(run).toMatchObject({ status: "running", project: null, params: { feature: "search" }, blueprint: { name: "diamond", version: 1 } });
    expect(run.nodes.map((node) => [node.key, node.status, node.attempt])).toEqual([
      ["design", "open", 1],
      ["api", "open", 1],
      ["ui", "open", 1],
      ["ship", "open", 1],
    ]);
    const tasks = await server.request<Task[]>(`/tasks?run_id=${run.id}&limit=50`, { as: alice });
    expect(tasks.body).toHaveLength(4);
    const byKey = new Map(tasks.body.map((task) => [task.node_key, task]));
    const id = (key: string): string => byKey.get(key)?.id as string;
    expect(byKey.get("design")).toMatchObject({ title: "Design search", depends_on: [], blocked: false, run_id: run.id, tags: ["blueprint:diamond"] });
    expect(byKey.get("api")).toMatchObject({ title: "API for search", depends_on: [id("design")], blocked: true, tags: ["backend", "blueprint:diamond"] });
    expect(byKey.get("ui")).toMatchObject({ depends_on: [id("design")], blocked: true });
    expect(byKey.get("ship")?.depends_on).toEqual([id("api"), id("ui")].sort());
    expect(byKey.get("ship")?.title).toBe(`Ship search (${run.id})`);
    const one = await server.request<Task[]>(`/tasks?run_id=${run.id}&node_key=ui`, { as: alice });
    expect(one.body.map((task) => task.id)).toEqual([id("ui")]);

    // Blocked run tasks cannot be claimed; the plan moves as its tasks complete.
    expect((await claim(server, alice, id("ship"))).status).toBe(409);
    expect((await claim(server, alice, id("api"))).status).toBe(409);
    await finish(server, alice, id("design"));
    await finish(server, alice, id("api"));
    expect((await claim(server, alice, id("ship"))).status).toBe(409);
    await finish(server, alice, id("ui"));
    await finish(server, alice, id("ship"));
    const done = await getRun(server, alice, run.id);
    expect(done.status).toBe("completed");
    expect(Object.values(statuses(done))).toEqual(["completed", "completed", "completed", "completed"]);
  });

  it("checks params with paths, shows a dry run without creating anything, and is idempotent with a key", async ({ server, alice }) => {
    await save(server, alice, "deploy", [
      { id: "build", title: "Build {{params.version}} for {{params.region}}" },
      { id: "publish", title: "Publish to {{item}} (#{{index}})", needs: ["build"], foreach: { from: "params.targets", max_items: 3 } },
    ], [
      { name: "version", type: "string", required: true },
      { name: "region", type: "string", enum: ["eu", "us"], default: "eu" },
      { name: "targets", type: "array", default: [] },
    ]);
    const bad = await server.request<ErrorBody>("/blueprints/deploy/instantiate", { as: alice, body: { project: null, params: { region: "mars", extra: 1, targets: "x" } } });
    expect(bad.status).toBe(422);
    expect(bad.body.errors?.map((error) => error.path).sort()).toEqual(["params.extra", "params.region", "params.targets", "params.version"]);
    const tooMany = await server.request<ErrorBody>("/blueprints/deploy/instantiate", { as: alice, body: { project: null, params: { version: "1", targets: ["a", "b", "c", "d"] } } });
    expect(tooMany.status).toBe(422);
    expect(tooMany.body.errors?.[0]?.path).toBe("params.targets");
    expect((await server.request("/blueprints/nope/instantiate", { as: alice, body: { project: null, params: {} } })).status).toBe(404);

    const dry = await server.request<{ dry_run: boolean; tasks: { key: string; title: string; depends_on: string[] }[] }>("/blueprints/deploy/instantiate", {
      as: alice,
      body: { project: null, params: { version: "2.0", targets: ["web", "cdn"] }, dry_run: true },
    });
    expect(dry.status, dry.text).toBe(200);
    expect(dry.body.tasks.map((task) => [task.key, task.title, task.depends_on])).toEqual([
      ["build", "Build 2.0 for eu", []],
      ["publish[0]", "Publish to web (#0)", ["build"]],
      ["publish[1]", "Publish to cdn (#1)", ["build"]],
    ]);
    expect((await server.request<Task[]>("/tasks", { as: alice })).body).toEqual([]);

    const headers = { "idempotency-key": "deploy-2.0" };
    const body = { project: null, params: { version: "2.0", targets: ["web"] } };
    const first = await server.request<Run>("/blueprints/deploy/instantiate", { as: alice, body, headers });
    const again = await server.request<Run>("/blueprints/deploy/instantiate", { as: alice, body, headers });
    expect(first.status).toBe(201);
    expect(again.body.id).toBe(first.body.id);
    expect((await server.request<Run[]>("/blueprints/runs?blueprint=deploy", { as: alice })).body).toHaveLength(1);
  });
});

describe("contracts at completion", () => {
  it("refuses an output that breaks the schema or a check with 422, and the task stays claimed", async ({ server, alice, bob }) => {
    const other = await server.request<Task>("/tasks", { as: bob, body: { title: "review", project: null } });
    await save(server, alice, "report", [
      {
        id: "write",
        title: "Write the report",
        output_schema: { type: "object", required: ["url", "pages"], properties: { url: { type: "string", minLength: 5 }, pages: { type: "integer", minimum: 1 } }, additionalProperties: false },
        done_check: [{ kind: "memory", tag: "report" }, { kind: "task", task_id: other.body.id }],
      },
    ]);
    const run = await start(server, alice, "report");
    const id = taskOf(run, "write");
    expect((await claim(server, alice, id)).status).toBe(200);
    const wrong = await complete(server, alice, id, { url: "x", pages: 0, extra: true });
    expect(wrong.status).toBe(422);
    expect(wrong.body.detail).toBe("output does not satisfy the node's contract");
    expect(wrong.body.errors?.map((error) => error.path).sort()).toEqual(["done_check.0", "done_check.1", "output.extra", "output.pages", "output.url"]);
    expect(await getTask(server, alice, id)).toMatchObject({ status: "claimed", assigned_to: "alice" });

    const missing = await complete(server, alice, id, { url: "https://example.com/r" });
    expect(missing.body.errors?.map((error) => error.path)).toContain("output.pages");

    // Satisfy the checks: an entry tagged `report` written since the claim, the other task completed.
    expect((await server.request("/memory", { as: alice, body: { content: "The Q3 report is written", tags: ["report"], project: null, scope: "project" } })).status).toBe(201);
    await finish(server, bob, other.body.id);
    const right = await complete(server, alice, id, { url: "https://example.com/r", pages: 3 });
    expect(right.status, right.text).toBe(200);
    expect(right.body.status).toBe("completed");
    expect((await getRun(server, alice, run.id)).status).toBe("completed");
  });

  it("checks a query of several words inside the completion's transaction", async ({ server, alice }) => {
    // pg warns (and pg 9 will fail) when a second statement is sent on a connection still running one.
    const warnings: string[] = [];
    const onWarning = (warning: Error): void => void warnings.push(warning.message);
    process.on("warning", onWarning);
    try {
      await save(server, alice, "notes", [{ id: "write", title: "Write the notes", done_check: [{ kind: "memory", query: "quarterly release checklist notes" }] }]);
      const run = await start(server, alice, "notes");
      const id = taskOf(run, "write");
      expect((await claim(server, alice, id)).status).toBe(200);
      const early = await complete(server, alice, id, {});
      expect(early.status).toBe(422);
      expect(early.body.errors?.map((error) => error.path)).toEqual(["done_check.0"]);
      expect((await server.request("/memory", { as: alice, body: { content: "The quarterly release checklist notes are in the wiki", project: null } })).status).toBe(201);
      const done = await complete(server, alice, id, {});
      expect(done.status, done.text).toBe(200);
      await new Promise((resolve) => setImmediate(resolve));
      expect(warnings.filter((message) => message.includes("already executing"))).toEqual([]);
    } finally {
      process.off("warning", onWarning);
    }
  });

  it("never runs SQL, a shell command or an HTTP request from a blueprint", async ({ server, alice }) => {
    let hits = 0;
    const { createServer } = await import("node:http");
    const listener = createServer((_request, response) => {
      hits += 1;
      response.end("{}");
    });
    await new Promise<void>((resolve) => listener.listen(0, "127.0.0.1", resolve));
    const address = listener.address();
    const url = `http://127.0.0.1:${typeof address === "object" && address ? address.port : 0}/hook`;
    try {
      // Kinds and fields that would do so do not exist: the save is refused with their paths.
      const refusals = async (nodes: Node[]): Promise<string[]> => {
        const refused = await server.request<ErrorBody>("/blueprints", { as: alice, body: { name: "evil", title: "evil", project: null, nodes } });
        expect(refused.status).toBe(422);
        return refused.body.errors?.map((error) => error.path) ?? [];
      };
      const shapes = await refusals([
        { id: "a", title: "a", done_check: [{ kind: "sql", sql: "DELETE FROM tasks" }] },
        { id: "b", title: "b", done_check: [{ kind: "shell", command: "touch /tmp/cairn-pwned" }] },
        { id: "c", title: "c", done_check: [{ kind: "http", url }] },
        { id: "d", title: "d", command: "rm -rf /", url, gate: { kind: "webhook", url } },
      ]);
      const rules = await refusals([
        { id: "e", title: "e", output_schema: { $ref: url, format: "uri", pattern: ".*" } },
        { id: "f", title: "{{constructor.constructor('return process')().exit()}}" },
        { id: "g", title: "{{ process.env.HOME }}" },
      ]);
      const paths = [...shapes, ...rules];
      for (const path of ["nodes.0.done_check.0", "nodes.1.done_check.0", "nodes.2.done_check.0", "nodes.3.command", "nodes.3.url", "nodes.3.gate", "nodes.0.output_schema.$ref", "nodes.0.output_schema.format", "nodes.0.output_schema.pattern", "nodes.1.title", "nodes.2.title"]) {
        expect(paths.some((found) => found.startsWith(path)), `${path} in ${paths.join(", ")}`).toBe(true);
      }
      // What is allowed is data: SQL in a check's query and a URL in a title are only text.
      await save(server, alice, "inert", [
        {
          id: "a",
          title: `Fetch ${url} and run $(touch /tmp/cairn-pwned); DROP TABLE tasks;`,
          description: "`rm -rf /` {{params.cmd}}",
          done_check: [{ kind: "memory", query: "'; DROP TABLE tasks; --" }],
          output_schema: { type: "object", properties: { cmd: { type: "string", const: "x" } } },
        },
      ], [{ name: "cmd", type: "string", default: "$(curl http://127.0.0.1)" }]);
      const run = await start(server, alice, "inert");
      const id = taskOf(run, "a");
      const task = await getTask(server, alice, id);
      expect(task.title).toBe(`Fetch ${url} and run $(touch /tmp/cairn-pwned); DROP TABLE tasks;`);
      expect((await claim(server, alice, id)).status).toBe(200);
      const refusedDone = await complete(server, alice, id, { cmd: "y" });
      expect(refusedDone.status).toBe(422);
      expect((await server.request<Task[]>("/tasks", { as: alice })).body.length).toBeGreaterThan(0);
      const { existsSync } = await import("node:fs");
      expect(existsSync("/tmp/cairn-pwned")).toBe(false);
      expect(hits).toBe(0);
    } finally {
      listener.close();
    }
  });
});

describe("fan-out", () => {
  const fanPlan = async (server: TestServer, as: Credentials): Promise<void> => {
    await save(server, as, "fan", [
      { id: "list", title: "List the targets", output_schema: { type: "object", required: ["targets"], properties: { targets: { type: "array", items: { type: "string" } } } } },
      { id: "publish", title: "Publish {{item}} ({{index}}) after {{nodes.list.output.targets}}", needs: ["list"], foreach: { from: "list.output.targets", max_items: 50 } },
      { id: "announce", title: "Announce", needs: ["publish"] },
    ]);
  };

  it("expands when its source completes, with rendered titles, and the fan-in waits for every item", async ({ server, alice }) => {
    await fanPlan(server, alice);
    const run = await start(server, alice, "fan");
    expect(statuses(run)).toEqual({ list: "open", announce: "open", publish: "pending" });
    const announce = await getTask(server, alice, taskOf(run, "announce"));
    expect(announce.depends_on).toEqual([taskOf(run, "list")]);

    expect((await claim(server, alice, taskOf(run, "list"))).status).toBe(200);
    const tooMany = await complete(server, alice, taskOf(run, "list"), { targets: Array.from({ length: 51 }, (_, index) => `t${index}`) });
    expect(tooMany.status).toBe(422);
    expect(tooMany.body.errors?.[0]?.path).toBe("output.targets");
    expect((await complete(server, alice, taskOf(run, "list"), { targets: ["web", "cdn", "docs"] })).status).toBe(200);

    const expanded = await getRun(server, alice, run.id);
    expect(statuses(expanded)).toEqual({ list: "completed", announce: "open", "publish[0]": "open", "publish[1]": "open", "publish[2]": "open" });
    expect(expanded.nodes.filter((node) => node.node_id === "publish").map((node) => node.item)).toEqual(["web", "cdn", "docs"]);
    const first = await getTask(server, alice, taskOf(expanded, "publish[0]"));
    expect(first.title).toBe('Publish web (0) after ["web","cdn","docs"]');
    const fanIn = await getTask(server, alice, taskOf(expanded, "announce"));
    expect(fanIn.blocked).toBe(true);
    expect(fanIn.depends_on).toHaveLength(4);
    for (const key of ["publish[0]", "publish[1]"]) await finish(server, alice, taskOf(expanded, key));
    expect((await claim(server, alice, taskOf(expanded, "announce"))).status).toBe(409);
    await finish(server, alice, taskOf(expanded, "publish[2]"));
    await finish(server, alice, taskOf(expanded, "announce"));
    expect((await getRun(server, alice, run.id)).status).toBe("completed");
  });

  it("skips a fan-out with zero items, and what needs it goes on", async ({ server, alice }) => {
    await fanPlan(server, alice);
    const run = await start(server, alice, "fan");
    await finish(server, alice, taskOf(run, "list"), { targets: [] });
    const after = await getRun(server, alice, run.id);
    expect(statuses(after)).toEqual({ list: "completed", announce: "open", publish: "skipped" });
    expect((await getTask(server, alice, taskOf(after, "announce"))).blocked).toBe(false);
    await finish(server, alice, taskOf(after, "announce"));
    expect((await getRun(server, alice, run.id)).status).toBe("completed");
  });

  it("never lets the fan-in be claimed early, with 20 agents racing the completion, 50 times", async ({ server, alice }) => {
    await fanPlan(server, alice);
    const racers = await Promise.all(Array.from({ length: 20 }, (_, index) => server.agent(`racer-${index}`)));
    for (let round = 0; round < 50; round += 1) {
      const run = await start(server, alice, "fan");
      const list = taskOf(run, "list");
      const announce = taskOf(run, "announce");
      expect((await claim(server, alice, list)).status).toBe(200);
      const [completed, ...claims] = await Promise.all([complete(server, alice, list, { targets: ["a", "b"] }), ...racers.map((racer) => claim(server, racer, announce))]);
      expect(completed?.status).toBe(200);
      expect(claims.map((response) => response.status).filter((status) => status !== 409)).toEqual([]);
      const again = await Promise.all(racers.slice(0, 5).map((racer) => claim(server, racer, announce)));
      expect(again.map((response) => response.status)).toEqual([409, 409, 409, 409, 409]);
    }
  });
});

describe("gates", () => {
  it("a human gate is the web UI's: no agent takes it, the UI's Approve claims and completes it", async ({ server, alice }) => {
    await save(server, alice, "approve", [
      { id: "draft", title: "Draft" },
      { id: "review", title: "Review", needs: ["draft"], gate: { kind: "human", title: "Approve the draft" } },
      { id: "publish", title: "Publish", needs: ["review"] },
    ]);
    const run = await start(server, alice, "approve");
    const gate = await getTask(server, alice, taskOf(run, "review"));
    expect(gate).toMatchObject({ title: "Approve the draft", gate: "human", assigned_to: server.config.UI_AGENT_ID });
    await finish(server, alice, taskOf(run, "draft"));
    expect((await claim(server, alice, gate.id)).status).toBe(403);
    await finish(server, server.owner, gate.id);
    await finish(server, alice, taskOf(run, "publish"));
    expect((await getRun(server, alice, run.id)).status).toBe("completed");
  });

  it("a task gate passes when its task completes; neither it nor a timer gate can be claimed", async ({ server, alice, bob }) => {
    const outside = await server.request<Task>("/tasks", { as: bob, body: { title: "sign-off", project: null } });
    await save(server, alice, "waits", [
      { id: "wait", title: "Wait for sign-off", gate: { kind: "task", task_id: outside.body.id } },
      { id: "go", title: "Go", needs: ["wait"] },
    ]);
    const run = await start(server, alice, "waits");
    expect((await claim(server, alice, taskOf(run, "wait"))).status).toBe(403);
    expect((await getTask(server, alice, taskOf(run, "go"))).blocked).toBe(true);
    await finish(server, bob, outside.body.id);
    const after = await getRun(server, alice, run.id);
    expect(statuses(after)).toEqual({ wait: "completed", go: "open" });
    expect((await getTask(server, alice, taskOf(after, "go"))).blocked).toBe(false);

    const missing = await server.request("/blueprints", { as: alice, body: { name: "waits2", title: "w", project: null, nodes: [{ id: "w", title: "w", gate: { kind: "task", task_id: "00000000-0000-4000-8000-000000000000" } }] } });
    expect(missing.status).toBe(201);
    const refused = await server.request<ErrorBody>("/blueprints/waits2/instantiate", { as: alice, body: { project: null, params: {} } });
    expect(refused.status).toBe(422);
    expect(refused.body.errors?.[0]?.path).toBe("nodes.w.gate.task_id");
  });

  const timers = test.extend("alice", ({ server }) => server.agent("alice"));
  timers.override("serverOptions", { timerSweepIntervalMs: 100 });
  timers("a timer gate starts when its needs are done and the server passes it when due", async ({ server, alice }) => {
    await save(server, alice, "later", [
      { id: "prepare", title: "Prepare" },
      { id: "cool", title: "Cool down", needs: ["prepare"], gate: { kind: "timer", after: "PT1S" } },
      { id: "go", title: "Go", needs: ["cool"] },
    ]);
    const run = await start(server, alice, "later");
    const gate = taskOf(run, "cool");
    expect((await getTask(server, alice, gate)).due_at).toBeNull();
    expect((await claim(server, alice, gate)).status).toBe(403);
    await finish(server, alice, taskOf(run, "prepare"));
    expect((await getTask(server, alice, gate)).due_at).not.toBeNull();
    await expect.poll(async () => (await getTask(server, alice, gate)).status, { timeout: 10_000, interval: 100 }).toBe("completed");
    expect((await getTask(server, alice, taskOf(run, "go"))).blocked).toBe(false);
  });
});

describe("failure policies", () => {
  it("retry reopens the task up to max_attempts, then the run fails", async ({ server, alice }) => {
    await save(server, alice, "flaky", [
      { id: "try", title: "Try", on_fail: "retry", max_attempts: 2 },
      { id: "after", title: "After", needs: ["try"] },
    ]);
    const run = await start(server, alice, "flaky");
    const id = taskOf(run, "try");
    expect((await claim(server, alice, id)).status).toBe(200);
    const failed = await fail(server, alice, id);
    expect(failed.status).toBe(200);
    expect(failed.body.status).toBe("open");
    const comments = await server.request<{ kind: string; comment: string }[]>(`/tasks/${id}/comments`, { as: alice });
    expect(comments.body.map((comment) => [comment.kind, comment.comment])).toContainEqual(["reopen", "retry 2/2"]);
    expect((await getRun(server, alice, run.id)).nodes[0]).toMatchObject({ status: "open", attempt: 2 });
    expect((await claim(server, alice, id)).status).toBe(200);
    expect((await fail(server, alice, id)).body.status).toBe("failed");
    const after = await getRun(server, alice, run.id);
    expect(after.status).toBe("failed");
    expect(statuses(after)).toEqual({ try: "failed", after: "failed" });
  });

  it("continue lets dependents go on and the run completes", async ({ server, alice }) => {
    await save(server, alice, "lenient", [
      { id: "optional", title: "Optional", on_fail: "continue" },
      { id: "main", title: "Main", needs: ["optional"] },
    ]);
    const run = await start(server, alice, "lenient");
    expect((await claim(server, alice, taskOf(run, "optional"))).status).toBe(200);
    expect((await fail(server, alice, taskOf(run, "optional"))).status).toBe(200);
    expect((await getTask(server, alice, taskOf(run, "main"))).blocked).toBe(false);
    await finish(server, alice, taskOf(run, "main"));
    const after = await getRun(server, alice, run.id);
    expect(after.status).toBe("completed");
    expect(statuses(after)).toEqual({ optional: "failed", main: "completed" });
  });

  it("stop fails the run and every unfinished task of it, saying which node failed", async ({ server, alice }) => {
    await save(server, alice, "strict", [
      { id: "a", title: "A" },
      { id: "b", title: "B" },
      { id: "c", title: "C", needs: ["a", "b"] },
    ]);
    const run = await start(server, alice, "strict");
    expect((await claim(server, alice, taskOf(run, "b"))).status).toBe(200);
    expect((await claim(server, alice, taskOf(run, "a"))).status).toBe(200);
    expect((await fail(server, alice, taskOf(run, "a"))).status).toBe(200);
    const after = await getRun(server, alice, run.id);
    expect(after.status).toBe("failed");
    expect(statuses(after)).toEqual({ a: "failed", b: "failed", c: "failed" });
    const comments = await server.request<{ comment: string }[]>(`/tasks/${taskOf(run, "c")}/comments`, { as: alice });
    expect(comments.body.map((comment) => comment.comment)).toContain("run failed: node a failed");
    const events = await server.request<{ type: string; payload: { node_key?: string } }[]>("/events?since=seq:0&type=blueprint.run.failed", { as: alice });
    expect(events.body.map((event) => event.payload.node_key)).toEqual(["a"]);
  });
});

describe("runs", () => {
  it("are listed, read and cancelled by their creator or an owner; others see 404 or 403", async ({ server, alice, bob }) => {
    await save(server, alice, "pair", [{ id: "a", title: "A" }, { id: "b", title: "B", needs: ["a"] }]);
    const first = await start(server, alice, "pair");
    const second = await start(server, alice, "pair");
    const listed = await server.request<Run[]>("/blueprints/runs?blueprint=pair&status=running", { as: alice });
    expect(listed.body.map((run) => run.id)).toEqual([second.id, first.id]);
    expect((await server.request(`/blueprints/runs/${first.id}/cancel`, { as: bob, method: "POST" })).status).toBe(403);
    const cancelled = await server.request<Run>(`/blueprints/runs/${first.id}/cancel`, { as: alice, method: "POST" });
    expect(cancelled.status).toBe(200);
    expect(cancelled.body.status).toBe("cancelled");
    expect(statuses(cancelled.body)).toEqual({ a: "failed", b: "failed" });
    expect((await server.request(`/blueprints/runs/${first.id}/cancel`, { as: alice, method: "POST" })).status).toBe(409);
    expect((await server.request(`/blueprints/runs/${second.id}/cancel`, { as: server.owner, method: "POST" })).status).toBe(200);
    expect((await server.request("/blueprints/runs/00000000-0000-4000-8000-000000000000", { as: alice })).status).toBe(404);

    // A project's runs are its members'.
    expect((await server.request("/projects", { as: alice, body: { name: "secret" } })).status).toBe(201);
    const saved = await server.request("/blueprints", { as: alice, body: { name: "hidden", title: "h", project: "secret", nodes: [{ id: "x", title: "x" }] } });
    expect(saved.status).toBe(201);
    const hidden = await server.request<Run>("/blueprints/hidden/instantiate", { as: alice, body: { project: "secret", params: {} } });
    expect(hidden.status).toBe(201);
    expect((await server.request(`/blueprints/runs/${hidden.body.id}`, { as: bob })).status).toBe(404);
    expect((await server.request(`/blueprints/runs/${hidden.body.id}/cancel`, { as: bob, method: "POST" })).status).toBe(404);
  });
});
