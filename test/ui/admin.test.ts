import type { Page } from "playwright-core";
import { expect } from "vitest";
import type { AgentRecord, AgentSelf } from "../../src/wire/agents.js";
import type { LogEntry } from "../../src/wire/logs.js";
import type { MemoryEntry as Entry } from "../../src/wire/memory.js";
import type { Project, ProjectMember } from "../../src/wire/projects.js";
import type { Handoff } from "../../src/wire/sessions.js";
import { openPage, describeInBrowser, type OpenPage } from "../helpers/browser.js";
import type { Credentials, TestServer } from "../helpers/server.js";
import { it, test, signIn as signInAs } from "../helpers/ui.js";

const PASSWORD = "admin tabs password";

/** The page's getComputedStyle, typed here: the tests compile without the DOM library. */
interface StyleGlobals {
  getComputedStyle(element: unknown, pseudo: string | null): { display: string; content: string; position: string };
}

/** The little of the page's globals the callbacks below use (the Node-side program has no DOM types). */
interface ClipboardGlobals {
  navigator: { clipboard: { readText(): Promise<string> } };
}
interface FormValue {
  value: string;
}

async function signIn(server: TestServer, opened: OpenPage, tab: string): Promise<Page> {
  const page = await signInAs(opened.page, server.url, PASSWORD, tab);
  await page.locator(`nav.tabs a[href="#/${tab}"][aria-current="page"]`).waitFor();
  return page;
}

/** Console errors other than the 401 of the first "who am I" before signing in. */
const unexpected = (errors: string[]) => errors.filter((error) => !/status of 401/.test(error));

/** A notice the UI shows after an action ("status" for a success). */
const notice = (page: Page, text: string) => page.locator(".notices").getByRole("status").filter({ hasText: text });

describeInBrowser("Agents tab", () => {
  it.override("serverEnv", { UI_PASSWORD: PASSWORD });

  /** The status of GET /agents/me with these raw credentials: 200 while the key works. */
  const meStatus = async (server: TestServer, agentId: string, apiKey: string) => (await server.request("/agents/me", { as: { agentId, apiKey } })).status;
  const listedIds = async (server: TestServer) => (await server.request<AgentRecord[]>("/agents?limit=500", { as: server.owner })).body.map((agent) => agent.agent_id);

  it("on a narrow screen shows each agent as a labelled card instead of a table to scroll sideways", async ({ server, browser }) => {
    const opened = await openPage(browser, { viewport: { width: 400, height: 800 } });
    const page = await signIn(server, opened, "agents");
    const row = page.locator(`tr[data-agent-id="${server.owner.agentId}"]`);
    await row.waitFor();
    const wrap = page.locator(".table-wrap");
    const { scrollWidth, clientWidth } = await wrap.evaluate((element) => {
      const box = element as unknown as { scrollWidth: number; clientWidth: number };
      return { scrollWidth: box.scrollWidth, clientWidth: box.clientWidth };
    });
    expect(scrollWidth).toBeLessThanOrEqual(clientWidth);
    const cell = row.locator('td[data-label="Role"]');
    const style = (pseudo?: string) =>
      cell.evaluate((element, which) => (globalThis as unknown as StyleGlobals).getComputedStyle(element, which ?? null), pseudo);
    expect((await style()).display).toBe("block");
    expect((await style("::before")).content).toBe('"Role"');
    expect((await style("::before")).position).toBe("absolute");
    expect(await page.locator(".data-table thead").boundingBox().then((box) => (box?.height ?? 0) <= 1)).toBe(true);
    await opened.context.close();
  });

  it("creates an agent and shows its key once, with a Copy button that puts the key on the clipboard", async ({ server, browser }) => {
    const opened = await openPage(browser);
    await opened.context.grantPermissions(["clipboard-read", "clipboard-write"], { origin: server.url });
    const page = await signIn(server, opened, "agents");
    await page.locator(`tr[data-agent-id="${server.owner.agentId}"]`).waitFor();

    await page.getByRole("button", { name: "New agent" }).click();
    const form = page.getByRole("dialog", { name: "New agent" });
    await form.getByLabel("Agent id (lower-case letters, digits, - and _)").fill("scout");
    await form.getByLabel("Display name (optional)").fill("Scout the explorer");
    await form.getByRole("button", { name: "Create agent" }).click();

    const shown = page.getByRole("dialog", { name: "Agent scout created" });
    await shown.waitFor();
    expect(await form.count()).toBe(0);
    expect(await shown.textContent()).toContain("This key is shown once.");
    const key = await shown.getByLabel("API key").inputValue();
    expect(key).toMatch(/^cairn_[A-Za-z0-9_-]{43}$/);
    expect(await meStatus(server, "scout", key)).toBe(200);
    const me = await server.request<AgentSelf>("/agents/me", { as: { agentId: "scout", apiKey: key } });
    expect(me.body).toMatchObject({ agent_id: "scout", role: "agent" });

    const copy = shown.getByRole("button", { name: "Copy key" });
    await copy.click();
    await shown.getByRole("button", { name: "Copied" }).waitFor();
    const clipboard = await page.evaluate(() => (globalThis as unknown as ClipboardGlobals).navigator.clipboard.readText());
    expect(clipboard).toBe(key);

    await shown.getByRole("button", { name: "Done" }).click();
    await shown.waitFor({ state: "detached" });
    const row = page.locator('tr[data-agent-id="scout"]');
    await row.waitFor();
    expect(await row.textContent()).toContain("Scout the explorer");
    expect(await listedIds(server)).toContain("scout");
    // Shown once: neither the text, the markup nor any field's value holds the key any more.
    expect(await page.locator("body").innerText()).not.toContain(key);
    expect(await page.content()).not.toContain(key);
    const values = await page.locator("input, textarea").evaluateAll((fields: FormValue[]) => fields.map((field) => field.value));
    expect(values.filter((value) => value.includes(key))).toEqual([]);
    expect(unexpected(opened.errors)).toEqual([]);
    await opened.context.close();
  });

  it("rotates a key after a confirmation: the old key is refused and the one shown works", async ({ server, browser }) => {
    const rotator = await server.agent("rotator");
    expect(await meStatus(server, rotator.agentId, rotator.apiKey)).toBe(200);
    const opened = await openPage(browser);
    const page = await signIn(server, opened, "agents");
    const row = page.locator('tr[data-agent-id="rotator"]');
    await row.getByRole("button", { name: "Rotate key" }).click();

    const confirm = page.getByRole("dialog", { name: "Rotate rotator's key?" });
    expect(await confirm.textContent()).toContain("The current key stops working at once");
    await confirm.getByRole("button", { name: "Cancel" }).click();
    await confirm.waitFor({ state: "detached" });
    expect(await meStatus(server, rotator.agentId, rotator.apiKey)).toBe(200);

    await row.getByRole("button", { name: "Rotate key" }).click();
    await confirm.getByRole("button", { name: "Rotate key" }).click();
    const shown = page.getByRole("dialog", { name: "New key for rotator" });
    await shown.waitFor();
    const key = await shown.getByLabel("API key").inputValue();
    expect(key).toMatch(/^cairn_/);
    expect(key).not.toBe(rotator.apiKey);
    expect(await meStatus(server, rotator.agentId, rotator.apiKey)).toBe(401);
    expect(await meStatus(server, rotator.agentId, key)).toBe(200);

    await page.keyboard.press("Escape");
    await shown.waitFor({ state: "detached" });
    expect(await page.locator("body").innerText()).not.toContain(key);
    // The page's own session is untouched by rotating another agent's key.
    expect((await opened.context.request.get(`${server.url}/agents/me`)).status()).toBe(200);
    expect(unexpected(opened.errors)).toEqual([]);
    await opened.context.close();
  });

  it("deletes an agent only once confirmed: it leaves the table and the list, its key stops working and its id is not reissued", async ({ server, browser }) => {
    const doomed = await server.agent("doomed");
    const opened = await openPage(browser);
    const page = await signIn(server, opened, "agents");
    const row = page.locator('tr[data-agent-id="doomed"]');
    await row.waitFor();
    // The owner cannot delete itself from here.
    const ownRow = page.locator(`tr[data-agent-id="${server.owner.agentId}"]`);
    expect(await ownRow.textContent()).toContain("(you)");
    expect(await ownRow.getByRole("button", { name: "Delete" }).count()).toBe(0);

    await row.getByRole("button", { name: "Delete" }).click();
    const confirm = page.getByRole("dialog", { name: "Delete doomed?" });
    await confirm.getByRole("button", { name: "Cancel" }).click();
    await confirm.waitFor({ state: "detached" });
    expect(await row.count()).toBe(1);
    expect(await listedIds(server)).toContain("doomed");
    expect(await meStatus(server, doomed.agentId, doomed.apiKey)).toBe(200);

    await row.getByRole("button", { name: "Delete" }).click();
    await confirm.getByRole("button", { name: "Delete agent" }).click();
    await confirm.waitFor({ state: "detached" });
    await notice(page, "doomed deleted.").waitFor();
    await row.waitFor({ state: "detached" });
    expect(await listedIds(server)).not.toContain("doomed");
    expect(await meStatus(server, doomed.agentId, doomed.apiKey)).toBe(401);

    // A deleted agent's id is never issued again: the form says why and shows no key.
    await page.getByRole("button", { name: "New agent" }).click();
    const form = page.getByRole("dialog", { name: "New agent" });
    await form.getByLabel("Agent id (lower-case letters, digits, - and _)").fill("doomed");
    await form.getByRole("button", { name: "Create agent" }).click();
    const refusal = form.getByRole("alert");
    await refusal.waitFor();
    expect(await refusal.textContent()).toBe("agent id taken");
    expect(await page.getByRole("dialog", { name: "Agent doomed created" }).count()).toBe(0);
    expect(await listedIds(server)).not.toContain("doomed");
    expect(unexpected(opened.errors).filter((error) => !/status of 409/.test(error))).toEqual([]);
    await opened.context.close();
  });
});

describeInBrowser("Projects tab", () => {
  const it = test.extend("builder", ({ server }) => server.agent("builder"));
  it.override("serverEnv", { UI_PASSWORD: PASSWORD });

  const members = async (server: TestServer, id: string) => (await server.request<ProjectMember[]>(`/projects/${id}/members`, { as: server.owner })).body;
  const ownerMembership = async (server: TestServer, id: string) => (await members(server, id)).some((row) => row.agent_id === server.owner.agentId);

  it("creates a project from the form, shows its members as agents join and leave, and joins and leaves it", async ({ server, builder, browser }) => {
    const opened = await openPage(browser);
    const page = await signIn(server, opened, "projects");
    await page.getByText("No project yet.").waitFor();

    await page.getByRole("button", { name: "New project" }).click();
    const form = page.getByRole("dialog", { name: "New project" });
    await form.getByLabel("Name (its id is the lower-cased slug)").fill("Release Train");
    await form.getByLabel("Description (optional)").fill("Ships every Thursday");
    await form.getByRole("button", { name: "Create and join" }).click();
    await form.waitFor({ state: "detached" });
    await notice(page, "Project release-train created; you joined it.").waitFor();

    const project = page.locator('li.project[data-project-id="release-train"]');
    await project.waitFor();
    expect(await project.getByRole("heading", { name: "Release Train" }).count()).toBe(1);
    expect(await project.textContent()).toContain("Ships every Thursday");
    await project.locator(".pill", { hasText: "member" }).waitFor();
    await project.locator(".pill", { hasText: "current" }).waitFor();
    const listed = await server.request<Project[]>("/projects", { as: server.owner });
    expect(listed.body).toEqual([expect.objectContaining({ id: "release-train", name: "Release Train", owner: server.owner.agentId, member_count: 1 })]);

    await project.getByRole("button", { name: "Show members" }).click();
    const memberList = project.locator(".members");
    const ownerLine = memberList.locator("li", { hasText: server.owner.agentId });
    await ownerLine.waitFor();
    expect(await ownerLine.textContent()).toContain("project owner");
    expect(await project.getByRole("button", { name: "Hide members" }).getAttribute("aria-expanded")).toBe("true");
    // Members only: the archivist sees every project without joining, and is not listed.
    expect(await memberList.locator("li").count()).toBe(1);
    expect(await memberList.textContent()).not.toContain(server.archivist.agentId);

    // Another agent joins and leaves over REST: the open member list follows.
    const builderLine = memberList.locator("li", { hasText: "builder" });
    expect((await server.request(`/projects/release-train/join`, { as: builder, method: "POST" })).status).toBe(200);
    await builderLine.waitFor({ timeout: 10_000 });
    await project.getByText("2 members").waitFor({ timeout: 10_000 });
    expect((await server.request(`/projects/release-train/leave`, { as: builder, method: "DELETE" })).status).toBeLessThan(300);
    await builderLine.waitFor({ state: "detached", timeout: 10_000 });
    await project.getByText("1 member ·").waitFor({ timeout: 10_000 });
    expect((await members(server, "release-train")).map((row) => row.agent_id)).toEqual([server.owner.agentId]);

    // The signed-in owner leaves and joins again from the page.
    await project.getByRole("button", { name: "Leave", exact: true }).click();
    await notice(page, "Left release-train.").waitFor();
    await project.getByRole("button", { name: "Join", exact: true }).waitFor();
    expect(await project.locator(".pill", { hasText: "member" }).count()).toBe(0);
    expect(await ownerMembership(server, "release-train")).toBe(false);
    await memberList.getByText("No member.").waitFor({ timeout: 10_000 });

    await project.getByRole("button", { name: "Join", exact: true }).click();
    await notice(page, "Joined release-train.").waitFor();
    await project.locator(".pill", { hasText: "member" }).waitFor();
    await project.getByRole("button", { name: "Leave", exact: true }).waitFor();
    expect(await ownerMembership(server, "release-train")).toBe(true);
    await ownerLine.waitFor({ timeout: 10_000 });
    expect(unexpected(opened.errors)).toEqual([]);
    await opened.context.close();
  });

  it("clears a project only once its id is typed; cancelling clears nothing, and unchecked parts stay", async ({ server, builder, browser }) => {
    expect((await server.request("/projects", { as: server.owner, body: { name: "Clearing House" } })).status).toBe(201);
    const entry = await server.request<Entry>("/memory", { as: server.owner, body: { content: "The clearing house settles at noon.", project: "clearing-house" } });
    expect(entry.status).toBe(201);
    const task = await server.request<{ id: string }>("/tasks", { as: server.owner, body: { title: "Reconcile the ledger", project: "clearing-house" } });
    expect(task.status).toBe(201);
    const projectMemory = async () => (await server.request<Entry[]>("/memory?project=clearing-house", { as: server.owner })).body;

    // Only a project's owner may clear it: another agent's project offers no Clear.
    expect((await server.request("/projects", { as: builder, body: { name: "Builders Corner" } })).status).toBe(201);

    const opened = await openPage(browser);
    const page = await signIn(server, opened, "projects");
    const others = page.locator('li.project[data-project-id="builders-corner"]');
    await others.waitFor();
    expect(await others.getByRole("button", { name: "Clear…" }).count()).toBe(0);
    const project = page.locator('li.project[data-project-id="clearing-house"]');
    await project.getByRole("button", { name: "Clear…" }).click();
    const confirm = page.getByRole("dialog", { name: "Clear project clearing-house?" });
    const clear = confirm.getByRole("button", { name: "Clear project" });
    const typed = confirm.getByLabel("Type clearing-house to confirm");
    expect(await clear.isDisabled()).toBe(true);
    await typed.fill("clearing");
    expect(await clear.isDisabled()).toBe(true);
    await confirm.getByRole("button", { name: "Cancel" }).click();
    await confirm.waitFor({ state: "detached" });
    expect((await projectMemory()).map((row) => row.id)).toEqual([entry.body.id]);
    expect((await server.request(`/memory/${entry.body.id}`, { as: server.owner })).status).toBe(200);

    await project.getByRole("button", { name: "Clear…" }).click();
    // A fresh dialog: nothing typed before counts.
    expect(await typed.inputValue()).toBe("");
    await confirm.getByRole("checkbox", { name: "its tasks" }).uncheck();
    await typed.fill("clearing-house");
    expect(await clear.isEnabled()).toBe(true);
    await clear.click();
    await confirm.waitFor({ state: "detached" });
    await notice(page, "Cleared clearing-house: 1 entry, 0 tasks, 0 messages.").waitFor();

    expect(await projectMemory()).toEqual([]);
    expect((await server.request(`/memory/${entry.body.id}`, { as: server.owner })).status).toBe(404);
    expect((await server.request(`/tasks/${task.body.id}`, { as: server.owner })).status).toBe(200);
    // The project and its members stay.
    const listed = await server.request<Project[]>("/projects", { as: server.owner });
    expect(listed.body.map((row) => row.id)).toContain("clearing-house");
    expect(await ownerMembership(server, "clearing-house")).toBe(true);
    await project.waitFor();
    expect(unexpected(opened.errors)).toEqual([]);
    await opened.context.close();
  });
});

describeInBrowser("Sessions tab", () => {
  const it = test
    .extend("builder", ({ server }) => server.agent("builder"))
    .extend("idle", ({ server }) => server.agent("idle"));
  it.override("serverEnv", { UI_PASSWORD: PASSWORD });

  const handOff = (server: TestServer, who: Credentials, body: Record<string, unknown>) => server.request<Handoff>("/sessions/handoff", { as: who, body });

  it("shows each agent's last handoff, lists the agents without one, and follows a new handoff live", async ({ server, builder, idle, browser }) => {
    const saved = await handOff(server, builder, {
      summary: "Coupon rounding half done.",
      host: "build-box",
      in_progress: ["coupon fix", "tax table import"],
      next_steps: ["tests for tax-inclusive prices"],
    });
    expect(saved.status).toBe(201);
    const stored = await server.request<{ last_handoff: Handoff | null }>("/sessions/handoff/builder?peek=true", { as: server.owner });
    expect(stored.body.last_handoff).toMatchObject({ summary: "Coupon rounding half done." });
    expect((await server.request<{ last_handoff: Handoff | null }>("/sessions/handoff/idle?peek=true", { as: server.owner })).body.last_handoff).toBeNull();

    const opened = await openPage(browser);
    const page = await signIn(server, opened, "sessions");
    const card = page.getByRole("article", { name: "builder", exact: true });
    await card.waitFor();
    expect(await card.locator(".handoff-summary").textContent()).toBe("Coupon rounding half done.");
    expect(await card.textContent()).toContain("from build-box");
    const listUnder = (title: string) => card.locator("div", { has: page.getByRole("heading", { name: title, exact: true }) }).locator("li").allTextContents();
    expect(await listUnder("In progress")).toEqual(["coupon fix", "tax table import"]);
    expect(await listUnder("Next steps")).toEqual(["tests for tax-inclusive prices"]);

    const without = page.getByRole("region", { name: "No handoff yet" });
    const withoutIds = async () => (await without.locator("li").allTextContents()).sort();
    // The list of agents without a handoff comes from its own request; wait for it rather than read it early.
    await expect.poll(withoutIds).toEqual([server.archivist.agentId, server.owner.agentId, "idle"].sort());
    expect(await page.getByRole("article").count()).toBe(1);

    expect((await handOff(server, idle, { summary: "Nothing started yet; read the backlog.", next_steps: ["pick a task"] })).status).toBe(201);
    const idleCard = page.getByRole("article", { name: "idle", exact: true });
    await idleCard.waitFor({ timeout: 10_000 });
    expect(await idleCard.locator(".handoff-summary").textContent()).toBe("Nothing started yet; read the backlog.");
    await expect.poll(withoutIds).toEqual([server.archivist.agentId, server.owner.agentId].sort());
    expect(await page.getByRole("article").count()).toBe(2);
    expect(unexpected(opened.errors)).toEqual([]);
    await opened.context.close();
  });
});

describeInBrowser("Archivist tab", () => {
  const it = test.extend("builder", ({ server }) => server.agent("builder"));
  it.override("serverEnv", { UI_PASSWORD: PASSWORD });

  it("shows the archivist's synthesis docs and its log, and the level filter narrows the log", async ({ server, builder, browser }) => {
    const synthesis = await server.request<Entry>("/memory", {
      as: server.archivist,
      body: { content: "# Synthesis: payments\n\nThe team moved retries behind the queue.", type: "doc", project: null, tags: ["synthesis"] },
    });
    expect(synthesis.status).toBe(201);
    // A doc tagged synthesis by someone else is not the archivist's.
    const impostor = await server.request<Entry>("/memory", {
      as: builder,
      body: { content: "My own synthesis of the flaky CI jobs.", type: "doc", project: null, tags: ["synthesis"] },
    });
    expect(impostor.status).toBe(201);
    const log = (level: string, action: string, message: string) =>
      server.request("/logs", { as: server.archivist, body: { level, source: "archivist", action, message, details: { probe: action } } });
    expect((await log("info", "pass", "scheduled pass: 2 entries in 0 projects")).status).toBe(201);
    expect((await log("warn", "merge.failed", "the model did not answer in time")).status).toBe(201);
    const warnings = await server.request<LogEntry[]>("/logs?level=warn", { as: server.owner });
    expect(warnings.body.map((entry) => entry.message)).toEqual(["the model did not answer in time"]);

    const opened = await openPage(browser);
    const page = await signIn(server, opened, "archivist");
    await page.getByText(`Agent ${server.archivist.agentId} is online`).waitFor();

    const docs = page.getByRole("region", { name: "Synthesis docs" });
    const card = docs.locator(`.memory-card[data-entry-id="${synthesis.body.id}"]`);
    await card.waitFor();
    expect(await card.locator(".card-content").textContent()).toContain("The team moved retries behind the queue.");
    expect(await docs.locator(".memory-card").count()).toBe(1);
    expect(await docs.locator(`.memory-card[data-entry-id="${impostor.body.id}"]`).count()).toBe(0);

    const logSection = page.getByRole("region", { name: "Log", exact: true });
    const messages = () => logSection.locator(".log-entry .log-message").allTextContents();
    await logSection.locator(".log-entry").nth(1).waitFor();
    expect(await messages()).toEqual(["the model did not answer in time", "scheduled pass: 2 entries in 0 projects"]);
    expect(await logSection.locator(".log-warn .log-row").textContent()).toContain("merge.failed");

    const level = logSection.getByLabel("Level", { exact: true });
    await level.selectOption("warn");
    await expect.poll(messages, { timeout: 10_000 }).toEqual(["the model did not answer in time"]);
    await level.selectOption("info");
    await expect.poll(messages, { timeout: 10_000 }).toEqual(["scheduled pass: 2 entries in 0 projects"]);
    await level.selectOption("error");
    await logSection.getByText("The log is empty.").waitFor({ timeout: 10_000 });
    expect((await server.request<LogEntry[]>("/logs?level=error", { as: server.owner })).body).toEqual([]);
    await level.selectOption("");
    await expect.poll(messages, { timeout: 10_000 }).toHaveLength(2);
    expect(unexpected(opened.errors)).toEqual([]);
    await opened.context.close();
  });
});
