import type { Page } from "playwright-core";
import { expect } from "vitest";
import type { Decision } from "../../src/wire/decisions.js";
import { openPage, describeInBrowser, type OpenPage } from "../helpers/browser.js";
import type { Credentials, TestServer } from "../helpers/server.js";
import { test, signIn as signInAs } from "../helpers/ui.js";

// CONTRACT §12 in the web UI: a task's decisions on its page, and the Decisions tab.

const PASSWORD = "decisions password";

const TASK_TITLE = "Choose the job queue backend";
const FIRST = "Run the job queue on Redis";
const SECOND = "Run the job queue on PostgreSQL with SKIP LOCKED";
const OTHER = "Version the public API in the path";
const ENTRY = "The job queue sees about 40 writes a second at peak.";
/** Long enough to be folded on the page; none of its words is searched for below. */
const LONG_RATIONALE = [
  "Redis is already deployed for the session cache, so running the queue there adds no new service.",
  "Its lists give us blocking pops, which keep workers idle without polling.",
  "We expect bursts at the end of each month when invoices are generated.",
  "Retries are handled by the worker, which re-enqueues a job with a delay.",
  "The team knows how to operate it, and its memory footprint at our volume is small.",
  "This last line is only seen once the whole rationale is shown.",
].join("\n");

interface Seeded {
  task: string;
  entry: string;
  first: Decision;
  second: Decision;
  other: Decision;
}

async function recorded(server: TestServer, as: Credentials, body: Record<string, unknown>): Promise<Decision> {
  const response = await server.request<Decision>("/decisions", { as, body: { project: null, ...body } });
  expect(response.status, response.text).toBe(201);
  return response.body;
}

/** A chain (the second supersedes the first) on one task, with alternatives and memory refs, and an unrelated decision by another agent. */
async function seed(server: TestServer, builder: Credentials, reviewer: Credentials): Promise<Seeded> {
  const entry = await server.request<{ id: string }>("/memory", { as: builder, body: { content: ENTRY, project: null, tags: ["queue"] } });
  expect(entry.status, entry.text).toBe(201);
  const task = await server.request<{ id: string }>("/tasks", { as: builder, body: { title: TASK_TITLE, project: null } });
  expect(task.status, task.text).toBe(201);
  const first = await recorded(server, builder, {
    decision: FIRST,
    rationale: LONG_RATIONALE,
    task_id: task.body.id,
    alternatives: [{ option: "A table with SKIP LOCKED", reason_rejected: "we feared lock contention" }, "Kafka"],
    memory_refs: [entry.body.id],
    tags: ["queue"],
  });
  const second = await recorded(server, builder, {
    decision: SECOND,
    rationale: "Measured: forty writes a second is far below what one table handles, and it is one service fewer to run.",
    task_id: task.body.id,
    supersedes: first.id,
    alternatives: [{ option: "Redis", reason_rejected: "another service to operate" }],
    memory_refs: [entry.body.id],
    tags: ["queue"],
  });
  const other = await recorded(server, reviewer, { decision: OTHER, rationale: "Clients cache by URL; a version header would be invisible to them.", tags: ["api"] });
  return { task: task.body.id, entry: entry.body.id, first: { ...first, superseded_by: second.id }, second, other };
}

/** Signs in at `tab` and waits until the event stream is connected, so that nothing recorded afterwards is missed. */
const signIn = (server: TestServer, opened: OpenPage, tab: string): Promise<Page> => signInAs(opened.page, server.url, PASSWORD, tab, '.live-status:has-text("Live")');

function assertClean(server: TestServer, opened: OpenPage): void {
  const origin = new URL(server.url).origin;
  expect(opened.requests.filter((url) => !url.startsWith(`${origin}/`) && !url.startsWith("data:"))).toEqual([]);
  // The one 401 is the page asking who is signed in before signing in.
  expect(opened.errors.filter((error) => !/status of 401/.test(error))).toEqual([]);
}

describeInBrowser("Decisions", () => {
  const it = test.extend("builder", ({ server }) => server.agent("builder")).extend("reviewer", ({ server }) => server.agent("reviewer"));
  it.override("serverEnv", { UI_PASSWORD: PASSWORD });

  it("shows a task's decisions on its page, newest first, the superseded one marked, and opens what they refer to", async ({ server, builder, reviewer, browser }) => {
    const seeded = await seed(server, builder, reviewer);
    const opened = await openPage(browser);
    const page = await signIn(server, opened, `tasks/${seeded.task}`);
    const detail = page.getByRole("dialog", { name: TASK_TITLE });
    const section = detail.locator(".task-decisions");
    const titles = () => section.locator(".decision-card .decision-title").allTextContents();
    await expect.poll(titles, { timeout: 10_000 }).toEqual([SECOND, FIRST]);

    const first = section.locator(`.decision-card[data-decision-id="${seeded.first.id}"]`);
    const second = section.locator(`.decision-card[data-decision-id="${seeded.second.id}"]`);
    expect(await first.getAttribute("class")).toContain("is-superseded");
    expect(await first.locator(".pill-superseded").textContent()).toBe("superseded");
    await expect.poll(() => first.locator(".decision-superseded-note").textContent()).toBe(`Superseded by “${SECOND}”`);
    expect(await second.getAttribute("class")).not.toContain("is-superseded");
    expect(await second.locator(".pill-superseded").count()).toBe(0);
    expect(await second.locator(".decision-meta").textContent()).toContain("builder");
    // On the task's own page a decision does not link back to the task.
    expect(await section.locator(".decision-task").count()).toBe(0);
    expect(await first.locator(".decision-alternatives li").allTextContents()).toEqual(["A table with SKIP LOCKED — rejected: we feared lock contention", "Kafka — no reason recorded"]);
    expect(await first.locator(".tag").allTextContents()).toEqual(["queue"]);

    // The long rationale is folded until asked for.
    const rationale = first.locator(".decision-rationale-text");
    expect(await rationale.textContent()).not.toContain("only seen once the whole rationale is shown");
    const more = first.getByRole("button", { name: "Show the whole rationale" });
    expect(await more.getAttribute("aria-expanded")).toBe("false");
    await more.click();
    await first.getByRole("button", { name: "Show less" }).waitFor();
    expect(await rationale.textContent()).toBe(LONG_RATIONALE);

    // A memory ref opens the entry over the task.
    const short = seeded.entry.slice(0, 8);
    await second.getByRole("button", { name: `Open entry ${short}` }).click();
    const entry = page.getByRole("dialog", { name: `Entry ${short}` });
    await entry.locator(".detail").waitFor();
    expect(await entry.locator(".card-content").textContent()).toBe(ENTRY);
    await page.keyboard.press("Escape");
    await entry.waitFor({ state: "detached" });
    expect(await detail.isVisible()).toBe(true);

    // The successor opens from the superseded decision's mark.
    await first.locator(".decision-superseded-note").getByRole("button").click();
    const successor = page.getByRole("dialog", { name: `Decision ${seeded.second.id.slice(0, 8)}` });
    await successor.locator(".decision-card").waitFor();
    expect(await successor.locator(".decision-title").textContent()).toBe(SECOND);
    expect(await successor.locator(".decision-details").textContent()).toContain("another service to operate");
    await page.keyboard.press("Escape");
    await successor.waitFor({ state: "detached" });

    // A decision recorded now appears on the page without a reload.
    const third = await recorded(server, reviewer, { decision: "Keep failed jobs in a dead-letter table", rationale: "So that nobody loses a job silently.", task_id: seeded.task });
    await expect.poll(titles, { timeout: 10_000 }).toEqual(["Keep failed jobs in a dead-letter table", SECOND, FIRST]);
    expect(await section.locator(`.decision-card[data-decision-id="${third.id}"] .decision-meta`).textContent()).toContain("reviewer");
    assertClean(server, opened);
    await opened.context.close();
  });

  it("lists decisions in their own tab, filtered by keywords, agent and superseded, each opening to the whole record", async ({ server, builder, reviewer, browser }) => {
    const seeded = await seed(server, builder, reviewer);
    const opened = await openPage(browser);
    const page = await signIn(server, opened, "decisions");
    const list = page.locator(".decision-list-section");
    const titles = () => list.locator(".decision-card .decision-title").allTextContents();
    // Superseded decisions are left out until asked for.
    await expect.poll(titles, { timeout: 10_000 }).toEqual([OTHER, SECOND]);

    const include = page.getByLabel("Include superseded");
    await include.check();
    await expect.poll(titles).toEqual([OTHER, SECOND, FIRST]);
    const first = list.locator(`.decision-card[data-decision-id="${seeded.first.id}"]`);
    expect(await first.getAttribute("class")).toContain("is-superseded");
    await expect.poll(() => first.locator(".decision-superseded-note").textContent()).toBe(`Superseded by “${SECOND}”`);
    await include.uncheck();
    await expect.poll(titles).toEqual([OTHER, SECOND]);

    const keywords = page.getByLabel("Keywords (decision and rationale)");
    await keywords.fill("postgresql");
    await expect.poll(titles).toEqual([SECOND]);
    await keywords.fill("zeppelin");
    await list.getByText("No decision matches these filters.").waitFor();
    await keywords.fill("");
    await expect.poll(titles).toEqual([OTHER, SECOND]);

    await page.locator(".filters").getByLabel("Agent").selectOption("reviewer");
    await expect.poll(titles).toEqual([OTHER]);
    await page.getByRole("button", { name: "Clear filters" }).click();
    await expect.poll(titles).toEqual([OTHER, SECOND]);

    // A row opens from the keyboard to the whole record.
    const second = list.locator(`.decision-card[data-decision-id="${seeded.second.id}"]`);
    const toggle = second.getByRole("button", { name: SECOND });
    expect(await toggle.getAttribute("aria-expanded")).toBe("false");
    expect(await second.locator(".decision-details").count()).toBe(0);
    await toggle.focus();
    await page.keyboard.press("Enter");
    await second.locator(".decision-details").waitFor();
    expect(await toggle.getAttribute("aria-expanded")).toBe("true");
    expect(await second.locator(".decision-alternatives li").allTextContents()).toEqual(["Redis — rejected: another service to operate"]);
    // The replaced decision is not listed (superseded ones are left out): its text is read on its own.
    await expect.poll(() => second.locator(".decision-details").textContent()).toContain(`Replaces“${FIRST}”`);

    const short = seeded.entry.slice(0, 8);
    await second.getByRole("button", { name: `Open entry ${short}` }).click();
    const entry = page.getByRole("dialog", { name: `Entry ${short}` });
    await entry.locator(".detail").waitFor();
    expect(await entry.locator(".card-content").textContent()).toBe(ENTRY);
    await page.keyboard.press("Escape");
    await entry.waitFor({ state: "detached" });

    // A decision recorded now comes in at the top.
    await recorded(server, reviewer, { decision: "Document every queue in the runbook", rationale: "On-call needs one place to look." });
    await expect.poll(titles, { timeout: 10_000 }).toEqual(["Document every queue in the runbook", OTHER, SECOND]);
    // The row stayed open through the refresh.
    expect(await toggle.getAttribute("aria-expanded")).toBe("true");

    // A decision's task links to the task's page.
    const taskLink = second.getByRole("link", { name: TASK_TITLE });
    await taskLink.click();
    await page.getByRole("dialog", { name: TASK_TITLE }).locator(".task-decisions .decision-card").first().waitFor();
    expect(new URL(page.url()).hash).toBe(`#/tasks/${seeded.task}`);
    assertClean(server, opened);
    await opened.context.close();
  });

  it("pages the list with Load more, filters it by tag, and says when nothing was decided yet", async ({ server, builder, browser }) => {
    const opened = await openPage(browser);
    const page = await signIn(server, opened, "decisions");
    await page.getByText("No decision recorded yet.", { exact: false }).waitFor();
    for (let index = 0; index < 27; index++) await recorded(server, builder, { decision: `Bulk decision ${index}`, rationale: "one of many", tags: ["bulk"] });
    for (let index = 0; index < 3; index++) await recorded(server, builder, { decision: `Other decision ${index}`, rationale: "not in bulk" });
    // A fresh page, so that no refresh from the stream runs while the list pages.
    await page.reload();
    await page.locator('.live-status:has-text("Live")').waitFor();
    const cards = page.locator(".decision-list-section .decision-card");
    const firstTitle = () => cards.first().locator(".decision-title").textContent();
    await expect.poll(firstTitle, { timeout: 10_000 }).toBe("Other decision 2");
    await page.locator(".filters").getByLabel("Tag", { exact: true }).fill("bulk");
    await expect.poll(firstTitle, { timeout: 10_000 }).toBe("Bulk decision 26");
    expect(await cards.count()).toBe(25);
    await page.getByRole("button", { name: "Load more" }).click();
    await expect.poll(() => cards.count()).toBe(27);
    expect(await cards.last().locator(".decision-title").textContent()).toBe("Bulk decision 0");
    expect(await page.getByRole("button", { name: "Load more" }).count()).toBe(0);
    assertClean(server, opened);
    await opened.context.close();
  });
});
