import type { Locator, Page } from "playwright-core";
import { expect } from "vitest";
import type { BlueprintRun as Run } from "../../src/wire/blueprint-runs.js";
import type { Task } from "../../src/wire/tasks.js";
import { openPage, describeInBrowser, type OpenPage } from "../helpers/browser.js";
import type { Credentials, TestServer } from "../helpers/server.js";
import { test, signIn as signInAs } from "../helpers/ui.js";

// CONTRACT §17 in the web UI: blueprints and their versions, runs, a run's plan as a picture that
// follows the run live, approving a human gate, cancelling a run, and gates on a task's page.

const PASSWORD = "blueprints password";

/** Build, then test and lint side by side, a human gate, a fan-out per region, an announcement. */
const RELEASE = {
  name: "release",
  project: null,
  title: "Release a version",
  description: "Build, check, approve, then publish to every region.",
  params: [
    { name: "version", type: "string", required: true },
    { name: "regions", type: "array", required: true },
  ],
  nodes: [
    { id: "build", title: "Build {{params.version}}", needs: [] },
    { id: "test", title: "Test {{params.version}}", needs: ["build"] },
    { id: "lint", title: "Lint", needs: ["build"] },
    { id: "approve", title: "Approve the release", needs: ["test", "lint"], gate: { kind: "human" } },
    { id: "publish", title: "Publish to {{item}}", needs: ["approve"], foreach: { from: "params.regions", max_items: 10 } },
    { id: "announce", title: "Announce {{params.version}}", needs: ["publish", "build"] },
  ],
};

const REGIONS = ["eu", "us", "ap"];

async function save(server: TestServer, as: Credentials, document: Record<string, unknown>): Promise<void> {
  const response = await server.request("/blueprints", { as, body: document });
  expect(response.status, response.text).toBe(201);
}

async function instantiate(server: TestServer, as: Credentials, name: string, params: Record<string, unknown>): Promise<Run> {
  const response = await server.request<Run>(`/blueprints/${name}/instantiate`, { as, body: { project: null, params } });
  expect(response.status, response.text).toBe(201);
  return response.body;
}

const taskOf = (run: Run, key: string): string => {
  const id = run.nodes.find((node) => node.key === key)?.task_id;
  if (!id) throw new Error(`no task for ${key}`);
  return id;
};

/** Claims and completes a task as `as`, through the API. */
async function finish(server: TestServer, as: Credentials, taskId: string, output?: unknown): Promise<void> {
  const claimed = await server.request(`/tasks/${taskId}/claim`, { as, body: {} });
  expect(claimed.status, claimed.text).toBe(200);
  const completed = await server.request(`/tasks/${taskId}/complete`, { as, body: output === undefined ? {} : { output } });
  expect(completed.status, completed.text).toBe(200);
}

const readRun = async (server: TestServer, id: string): Promise<Run> => (await server.request<Run>(`/blueprints/runs/${id}`, { as: server.owner })).body;

/** Signs in at `tab` and waits for the event stream, so that nothing done afterwards is missed. */
const signIn = (server: TestServer, opened: OpenPage, tab: string): Promise<Page> => signInAs(opened.page, server.url, PASSWORD, tab, '.live-status:has-text("Live")');

function assertClean(server: TestServer, opened: OpenPage, expected: RegExp[] = []): void {
  const origin = new URL(server.url).origin;
  expect(opened.requests.filter((url) => !url.startsWith(`${origin}/`) && !url.startsWith("data:"))).toEqual([]);
  // The 401 is the page asking who is signed in before signing in.
  expect(opened.errors.filter((error) => !/status of 401/.test(error) && !expected.some((pattern) => pattern.test(error)))).toEqual([]);
}

/** The picture's boxes, as drawn: node id, state, layer and position in the layer. */
interface DrawnBox {
  getAttribute(name: string): string | null;
}
const boxes = (picture: Locator) =>
  picture.locator("[data-node-id]").evaluateAll((nodes: DrawnBox[]) =>
    nodes.map((node) => ({ id: node.getAttribute("data-node-id"), state: node.getAttribute("data-state"), layer: Number(node.getAttribute("data-layer")), transform: node.getAttribute("transform") })),
  );
const stateOf = async (picture: Locator, id: string): Promise<string | null> => picture.locator(`[data-node-id="${id}"]`).getAttribute("data-state");
const itemStates = (picture: Locator, id: string) =>
  picture.locator(`[data-node-id="${id}"] .plan-item`).evaluateAll((items: DrawnBox[]) => items.map((item) => item.getAttribute("class")?.match(/state-(\w+)/)?.[1] ?? ""));

describeInBrowser("Blueprints tab", () => {
  const it = test.extend("builder", ({ server }) => server.agent("builder"));
  it.override("serverEnv", { UI_PASSWORD: PASSWORD });

  it("draws a run's plan in layers with each task's state, follows it live, and approves a human gate", async ({ server, builder, browser }) => {
    await save(server, builder, RELEASE);
    const run = await instantiate(server, builder, "release", { version: "2.4", regions: REGIONS });
    const opened = await openPage(browser);
    const page = await signIn(server, opened, `blueprints/runs/${run.id}`);
    const picture = page.getByRole("group", { name: /^Plan of release v1: / });
    await expect.poll(async () => (await boxes(picture)).length, { timeout: 10_000 }).toBe(6);

    // Layers by the longest chain of needs: announce needs build too, but comes after publish.
    const drawn = await boxes(picture);
    expect(Object.fromEntries(drawn.map((box) => [box.id, box.layer]))).toEqual({ build: 0, test: 1, lint: 1, approve: 2, publish: 3, announce: 4 });
    expect(Object.fromEntries(drawn.map((box) => [box.id, box.state]))).toEqual({ build: "open", test: "blocked", lint: "blocked", approve: "blocked", publish: "blocked", announce: "blocked" });
    expect(await picture.getAttribute("data-orientation")).toBe("columns");
    // Titles with their placeholders filled in, a stack with a row per region, links to the tasks.
    expect(await picture.getByRole("link", { name: "Build 2.4: open" }).getAttribute("href")).toBe(`#/tasks/${taskOf(run, "build")}`);
    expect(await picture.locator('[data-node-id="publish"] .plan-item .item-label').allTextContents()).toEqual(REGIONS);
    expect(await picture.getByRole("link", { name: "Publish to us (publish[1]): blocked" }).getAttribute("href")).toBe(`#/tasks/${taskOf(run, "publish[1]")}`);
    expect(await picture.locator(".plan-edge").count()).toBe(7);
    expect(await picture.locator('.plan-edge[data-from="build"][data-to="announce"]').count()).toBe(1);
    expect(await page.locator(".run-head").innerText()).toContain("0 of 8 tasks done");
    expect(await page.locator(".run-details").innerText()).toContain('["eu","us","ap"]');
    const legend = await page.locator(".plan-legend li").allTextContents();
    for (const state of ["pending", "blocked", "open", "claimed", "completed", "failed", "skipped"]) expect(legend.some((text) => text.startsWith(state))).toBe(true);
    expect(await page.getByRole("button", { name: /^Approve/ }).count()).toBe(0);

    // Work done by an agent shows up without a reload; the gate then waits for the UI's agent.
    await server.request(`/tasks/${taskOf(run, "build")}/claim`, { as: builder, body: {} });
    await expect.poll(() => stateOf(picture, "build"), { timeout: 10_000 }).toBe("claimed");
    // The state comes with the event; who claimed it with the task read after it.
    await expect.poll(() => picture.getByRole("link", { name: "Build 2.4: claimed by builder" }).count(), { timeout: 10_000 }).toBe(1);
    await server.request(`/tasks/${taskOf(run, "build")}/complete`, { as: builder, body: {} });
    await finish(server, builder, taskOf(run, "test"));
    await finish(server, builder, taskOf(run, "lint"));
    await expect.poll(() => stateOf(picture, "approve"), { timeout: 10_000 }).toBe("open");
    expect(await picture.locator('[data-node-id="approve"] .plan-node').getAttribute("class")).toContain("is-awaiting");
    expect(await picture.locator('.plan-edge.is-done[data-from="build"]').count()).toBe(3);
    const gates = page.getByRole("region", { name: "Waiting for your approval" });
    const approve = gates.getByRole("button", { name: "Approve: Approve the release" });
    await approve.click();

    // Approving claims and completes the gate as the UI's agent; the fan-out is released.
    await expect.poll(() => stateOf(picture, "approve"), { timeout: 10_000 }).toBe("completed");
    await expect.poll(() => itemStates(picture, "publish")).toEqual(["open", "open", "open"]);
    expect(await gates.count()).toBe(0);
    const gate = await server.request<Task>(`/tasks/${taskOf(run, "approve")}`, { as: server.owner });
    expect(gate.body).toMatchObject({ status: "completed", assigned_to: "human" });
    expect(await page.locator(".run-head").innerText()).toContain("4 of 8 tasks done");

    // Everything else done by the agent: the run completes, and the page says so.
    for (const key of ["publish[0]", "publish[1]", "publish[2]"]) await finish(server, builder, taskOf(run, key));
    await finish(server, builder, taskOf(run, "announce"));
    await expect.poll(() => page.locator(".run-head .pill").textContent(), { timeout: 10_000 }).toBe("completed");
    await expect.poll(async () => (await boxes(picture)).every((box) => box.state === "completed")).toBe(true);
    expect(await page.getByRole("button", { name: "Cancel run" }).count()).toBe(0);

    // The same plan is drawn the same way on a fresh page.
    const before = await boxes(picture);
    await page.reload();
    await expect.poll(async () => (await boxes(picture)).length, { timeout: 10_000 }).toBe(6);
    expect(await boxes(picture)).toEqual(before);
    assertClean(server, opened);
    await opened.context.close();
  });

  it("opens a node's task from the keyboard, and the task's page links back to the run and names its node", async ({ server, builder, browser }) => {
    await save(server, builder, RELEASE);
    const run = await instantiate(server, builder, "release", { version: "3.0", regions: ["eu"] });
    const opened = await openPage(browser);
    const page = await signIn(server, opened, `blueprints/runs/${run.id}`);
    const picture = page.getByRole("group", { name: /^Plan of release v1: / });
    const lint = picture.getByRole("link", { name: "Lint: blocked" });
    await lint.waitFor({ timeout: 10_000 });
    // Tab walks the boxes: from the first link in the picture to the next.
    await picture.getByRole("link", { name: "Build 3.0: open" }).focus();
    await page.keyboard.press("Tab");
    await page.keyboard.press("Tab");
    expect(await page.evaluate("document.activeElement?.getAttribute('aria-label')")).toBe("Lint: blocked");
    expect(await page.evaluate("getComputedStyle(document.activeElement.querySelector('.focus-ring')).stroke")).not.toBe("none");
    await page.keyboard.press("Enter");

    const detail = page.getByRole("dialog", { name: "Lint" });
    await detail.waitFor();
    expect(new URL(page.url()).hash).toBe(`#/tasks/${taskOf(run, "lint")}`);
    expect(await detail.locator(".task-node-key").textContent()).toBe("lint");
    const back = detail.getByRole("link", { name: `release run ${run.id.slice(0, 8)}` });
    await back.click();
    await page.getByRole("heading", { name: "release v1" }).waitFor();
    expect(new URL(page.url()).hash).toBe(`#/blueprints/runs/${run.id}`);
    assertClean(server, opened);
    await opened.context.close();
  });

  it("lists blueprints with their versions and runs by status, and cancels a running run", async ({ server, builder, browser }) => {
    const v1 = { ...RELEASE, nodes: RELEASE.nodes.filter((node) => node.id !== "lint").map((node) => ({ ...node, needs: node.needs.filter((need) => need !== "lint") })) };
    await save(server, builder, v1);
    await save(server, builder, RELEASE);
    await save(server, builder, { name: "hotfix", project: null, title: "Ship a hotfix", nodes: [{ id: "patch", title: "Patch it", needs: [] }] });
    const hotfix = await instantiate(server, builder, "hotfix", {});
    await finish(server, builder, taskOf(hotfix, "patch"));
    const release = await instantiate(server, builder, "release", { version: "2.5", regions: ["eu", "us"] });

    const opened = await openPage(browser);
    const page = await signIn(server, opened, "blueprints");
    const list = page.locator(".blueprint-list");
    await expect.poll(() => list.locator(".blueprint-title").allTextContents(), { timeout: 10_000 }).toEqual(["Ship a hotfix", "Release a version"]);
    const card = list.locator('.blueprint-card[data-blueprint="release"]');
    expect(await card.locator(".pill-version").textContent()).toBe("v2");
    expect(await card.innerText()).toContain("6 nodes");

    // Opened, a blueprint lists its versions, newest first, and draws the chosen one's plan.
    const toggle = card.getByRole("button", { name: "Release a version" });
    expect(await toggle.getAttribute("aria-expanded")).toBe("false");
    await toggle.click();
    const versions = card.locator(".version-list li");
    await expect.poll(() => versions.count()).toBe(2);
    expect(await versions.first().innerText()).toContain("current");
    const preview = card.getByRole("group", { name: /^Plan of release v2: 6 nodes/ });
    await expect.poll(async () => (await boxes(preview)).length).toBe(6);
    expect(await preview.locator('[data-node-id="publish"]').getByRole("img").getAttribute("aria-label")).toBe("Publish to …: one task per item of params.regions");
    await card.getByRole("button", { name: "Show the plan of version 1" }).click();
    const older = card.getByRole("group", { name: /^Plan of release v1: 5 nodes/ });
    await expect.poll(async () => (await boxes(older)).map((box) => box.id)).toEqual(["build", "test", "approve", "publish", "announce"]);

    // Runs, newest first, filtered by status and by blueprint.
    const runs = page.locator(".run-list .run-row");
    const shown = () => runs.evaluateAll((rows: DrawnBox[]) => rows.map((row) => `${row.getAttribute("data-run-id")} ${row.getAttribute("data-status")}`));
    await expect.poll(shown).toEqual([`${release.id} running`, `${hotfix.id} completed`]);
    expect(await runs.first().innerText()).toContain("0/7 done");
    expect(await runs.first().innerText()).toContain('version: 2.5 · regions: ["eu","us"]');
    await page.locator(".run-list-section").getByLabel("Status").selectOption("completed");
    await expect.poll(shown).toEqual([`${hotfix.id} completed`]);
    await page.locator(".run-list-section").getByLabel("Status").selectOption("running");
    await expect.poll(shown).toEqual([`${release.id} running`]);
    await card.getByRole("button", { name: "Show its runs" }).click();
    expect(await page.locator(".run-list-section").getByLabel("Blueprint").inputValue()).toBe("release");
    await page.locator(".run-list-section").getByRole("button", { name: "Clear filters" }).click();
    await expect.poll(shown).toEqual([`${release.id} running`, `${hotfix.id} completed`]);

    // A run started elsewhere comes in at the top.
    const another = await instantiate(server, builder, "hotfix", {});
    await expect.poll(shown, { timeout: 10_000 }).toEqual([`${another.id} running`, `${release.id} running`, `${hotfix.id} completed`]);

    // The owner cancels the builder's run from its page, after confirming.
    await page.getByRole("link", { name: "release v2" }).click();
    await page.getByRole("heading", { name: "release v2" }).waitFor();
    expect(new URL(page.url()).hash).toBe(`#/blueprints/runs/${release.id}`);
    await page.getByRole("button", { name: "Cancel run" }).click();
    const confirm = page.getByRole("dialog", { name: "Cancel this run?" });
    await confirm.getByRole("button", { name: "Cancel the run" }).click();
    await confirm.waitFor({ state: "detached" });
    await expect.poll(() => page.locator(".run-head .pill").textContent(), { timeout: 10_000 }).toBe("cancelled");
    expect(await page.getByRole("button", { name: "Cancel run" }).count()).toBe(0);
    const picture = page.getByRole("group", { name: /^Plan of release v2: / });
    await expect.poll(() => stateOf(picture, "build")).toBe("failed");
    expect((await readRun(server, release.id)).status).toBe("cancelled");

    // Back to the list, as it was left.
    await page.getByRole("link", { name: "← Blueprints and runs" }).click();
    await expect.poll(shown).toEqual([`${another.id} running`, `${release.id} cancelled`, `${hotfix.id} completed`]);
    assertClean(server, opened);
    await opened.context.close();
  });

  it("shows why an approval was refused, and a pending fan-out and a timer gate no one can claim", async ({ server, builder, browser }) => {
    await save(server, builder, {
      name: "migrate",
      project: null,
      title: "Migrate the shards",
      nodes: [
        { id: "list", title: "List the shards", needs: [], output_schema: { type: "object", properties: { shards: { type: "array", items: { type: "string" } } }, required: ["shards"] } },
        { id: "move", title: "Move {{item}}", needs: ["list"], foreach: { from: "list.output.shards", max_items: 20 } },
        { id: "settle", title: "Let it settle", needs: ["move"], gate: { kind: "timer", after: "PT1H" } },
        // A gate whose completion needs an output: approving it without one is refused.
        { id: "signoff", title: "Sign off", needs: [], gate: { kind: "human" }, output_schema: { type: "object", properties: { ticket: { type: "string" } }, required: ["ticket"] } },
      ],
    });
    const run = await instantiate(server, builder, "migrate", {});
    const opened = await openPage(browser);
    const page = await signIn(server, opened, `blueprints/runs/${run.id}`);
    const picture = page.getByRole("group", { name: /^Plan of migrate v1: / });
    await expect.poll(() => stateOf(picture, "move"), { timeout: 10_000 }).toBe("pending");
    expect(await picture.locator('[data-node-id="move"] .item-label').textContent()).toBe("waits for its items");
    // A box without a task is still reached from the keyboard, named by what it says.
    const waiting = picture.getByRole("img", { name: "Move …: waits for its items" });
    await waiting.focus();
    expect(await page.evaluate("document.activeElement?.getAttribute('aria-label')")).toBe("Move …: waits for its items");
    expect(await picture.getByRole("link", { name: "Let it settle: blocked · timer gate" }).count()).toBe(1);

    const approve = page.getByRole("button", { name: "Approve: Sign off" });
    await approve.click();
    const refusal = page.locator(".gate-row").getByRole("alert");
    await refusal.waitFor();
    expect(await refusal.textContent()).toBe("Could not approve: output does not satisfy the node's contract (output: must be object)");
    // The claim went through: the gate is the UI's, still waiting to be completed.
    await expect.poll(() => stateOf(picture, "signoff"), { timeout: 10_000 }).toBe("claimed");
    expect(await approve.isEnabled()).toBe(true);

    // The fan-out expands live when its source completes; a long stack folds after 11 items.
    const shards = Array.from({ length: 14 }, (_, index) => `shard-${index + 1}`);
    await finish(server, builder, taskOf(run, "list"), { shards });
    const labels = () => picture.locator('[data-node-id="move"] .item-label').allTextContents();
    await expect.poll(labels, { timeout: 10_000 }).toEqual([...shards.slice(0, 11), "+ 3 more: show all"]);
    expect(await picture.locator('[data-node-id="move"] .plan-item.state-open').count()).toBe(11);
    const more = picture.getByRole("button", { name: "Show all 14 items of Move …" });
    await more.focus();
    expect(await page.evaluate("document.activeElement?.getAttribute('aria-label')")).toBe("Show all 14 items of Move …");
    await page.keyboard.press("Enter");
    await expect.poll(labels).toEqual(shards);
    expect(await picture.getByRole("link", { name: "Move shard-14 (move[13]): open" }).count()).toBe(1);

    // On the gate's page the approval can carry the output its node asks for.
    await page.locator(".gate-row").getByRole("link", { name: "Sign off" }).click();
    const gatePage = page.getByRole("dialog", { name: "Sign off" });
    await gatePage.getByLabel("Output to approve with (JSON or text, optional)").fill('{"ticket": "OPS-42"}');
    await gatePage.getByRole("button", { name: "Approve" }).click();
    await gatePage.getByRole("button", { name: "Reopen" }).waitFor();
    expect(await gatePage.locator(".output").textContent()).toContain("OPS-42");
    await page.keyboard.press("Escape");

    // A timer gate's page offers no Claim and says why.
    const timer = (await readRun(server, run.id)).nodes.find((node) => node.key === "settle")?.task_id ?? "";
    await page.goto(`${server.url}/ui/#/tasks/${timer}`);
    const timerPage = page.getByRole("dialog", { name: "Let it settle" });
    await timerPage.locator(".task-actions").waitFor();
    expect(await timerPage.locator(".task-actions").innerText()).toContain("It is a timer gate: the server completes it when it is due");
    expect(await timerPage.getByRole("button", { name: "Claim" }).count()).toBe(0);
    expect(await timerPage.locator(".task-gate").textContent()).toContain("A timer gate");
    assertClean(server, opened, [/status of 422/]);
    await opened.context.close();
  });

  it("approves a human gate from the task's page, where Claim is not offered", async ({ server, builder, browser }) => {
    await save(server, builder, { name: "review", project: null, title: "Review a change", nodes: [{ id: "ok", title: "Looks good?", needs: [], gate: { kind: "human" } }, { id: "merge", title: "Merge it", needs: ["ok"] }] });
    const run = await instantiate(server, builder, "review", {});
    const opened = await openPage(browser);
    const page = await signIn(server, opened, `tasks/${taskOf(run, "ok")}`);
    const detail = page.getByRole("dialog", { name: "Looks good?" });
    await detail.locator(".task-actions").waitFor();
    expect(await detail.locator(".task-gate").textContent()).toBe("A human gate: human approves it in the web UI");
    expect(await detail.getByRole("button", { name: "Claim" }).count()).toBe(0);
    await detail.getByLabel("Comment for the log (optional)").fill("ship it");
    await detail.getByRole("button", { name: "Approve" }).click();
    await detail.getByRole("button", { name: "Reopen" }).waitFor();
    expect(await detail.locator(".comment-log li").allTextContents()).toEqual(expect.arrayContaining([expect.stringContaining("ship it")]));
    const merge = await server.request<Task & { blocked: boolean }>(`/tasks/${taskOf(run, "merge")}`, { as: builder });
    expect(merge.body).toMatchObject({ status: "open", blocked: false });
    assertClean(server, opened);
    await opened.context.close();
  });
});
