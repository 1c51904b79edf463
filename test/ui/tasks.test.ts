import type { Page } from "playwright-core";
import { expect } from "vitest";
import type { Task } from "../../src/wire/tasks.js";
import { openPage, describeInBrowser, type OpenPage } from "../helpers/browser.js";
import type { TestServer } from "../helpers/server.js";
import { afterAction, test, signIn as signInAs } from "../helpers/ui.js";

const PASSWORD = "task board password";

const signIn = (server: TestServer, opened: OpenPage): Promise<Page> => signInAs(opened.page, server.url, PASSWORD, "tasks", ".board");

describeInBrowser("Tasks tab", () => {
  const it = test.extend("builder", ({ server }) => server.agent("builder"));
  it.override("serverEnv", { UI_PASSWORD: PASSWORD });

  it("creates a task, claims it, completes it with an output and reopens it, logging each step", async ({ server, browser }) => {
    const opened = await openPage(browser);
    const page = await signIn(server, opened);
    await page.getByRole("button", { name: "New task" }).click();
    const form = page.getByRole("dialog", { name: "New task" });
    await form.getByLabel("Title").fill("Document the retry policy");
    await form.getByLabel("Priority").selectOption("high");
    await form.getByRole("button", { name: "Create task" }).click();
    await form.waitFor({ state: "detached" });

    const card = page.locator(".column-open .task-card", { hasText: "Document the retry policy" });
    await card.waitFor();
    const id = (await card.getAttribute("data-task-id")) ?? "";
    await card.getByRole("button", { name: "Document the retry policy" }).click();
    const detail = page.getByRole("dialog", { name: "Document the retry policy" });
    await detail.getByRole("button", { name: "Claim" }).click();
    await afterAction(detail, detail.getByRole("button", { name: "Complete" }), opened.failures);
    await detail.getByLabel("Output to complete with (JSON or text, optional)").fill('{"doc": "docs/retries.md"}');
    await detail.getByLabel("Comment for the log (optional)").fill("written");
    await detail.getByRole("button", { name: "Complete" }).click();
    await afterAction(detail, detail.getByRole("button", { name: "Reopen" }), opened.failures);
    expect(await detail.locator(".output").textContent()).toContain("docs/retries.md");
    await page.locator(`.column-completed [data-task-id="${id}"]`).waitFor();

    const stored = await server.request<Task>(`/tasks/${id}`, { as: server.owner });
    expect(stored.body).toMatchObject({ status: "completed", result: { doc: "docs/retries.md" } });

    await detail.getByRole("button", { name: "Reopen" }).click();
    await afterAction(detail, detail.getByRole("button", { name: "Claim" }), opened.failures);
    await detail.getByLabel("Add a comment").fill("needs a section on backoff");
    await detail.getByRole("button", { name: "Comment", exact: true }).click();
    await detail.locator(".comment-log li", { hasText: "needs a section on backoff" }).waitFor();
    const kinds = await detail.locator(".comment-log li .pill").allTextContents();
    expect(kinds).toEqual(["claim", "complete", "reopen"]);
    await page.keyboard.press("Escape");
    await page.locator(`.column-open [data-task-id="${id}"]`).waitFor();
    await opened.context.close();
  });

  it("releases a claim, claims again and fails the task with a reason, logging each step", async ({ server, builder, browser }) => {
    const task = await server.request<Task>("/tasks", { as: builder, body: { title: "Rotate the signing keys", project: null } });
    const opened = await openPage(browser);
    const page = await signIn(server, opened);
    await page.locator(`[data-task-id="${task.body.id}"]`).getByRole("button", { name: "Rotate the signing keys" }).click();
    const detail = page.getByRole("dialog", { name: "Rotate the signing keys" });
    await detail.getByRole("button", { name: "Claim" }).click();
    await detail.getByRole("button", { name: "Unclaim" }).click();
    await afterAction(detail, detail.getByRole("button", { name: "Claim" }), opened.failures);
    expect((await server.request<Task & { assigned_to: string | null }>(`/tasks/${task.body.id}`, { as: server.owner })).body).toMatchObject({ status: "open", assigned_to: null });

    await detail.getByRole("button", { name: "Claim" }).click();
    await afterAction(detail, detail.getByRole("button", { name: "Fail" }), opened.failures);
    await detail.getByLabel("Comment for the log (optional)").fill("the HSM is offline");
    await detail.getByRole("button", { name: "Fail" }).click();
    await afterAction(detail, detail.getByRole("button", { name: "Reopen" }), opened.failures);
    await page.locator(`.column-failed [data-task-id="${task.body.id}"]`).waitFor();
    expect((await server.request<Task>(`/tasks/${task.body.id}`, { as: server.owner })).body.status).toBe("failed");
    await expect.poll(() => detail.locator(".comment-log li .pill").allTextContents()).toEqual(["claim", "unclaim", "claim", "fail"]);
    expect(await detail.locator(".comment-log li", { hasText: "the HSM is offline" }).count()).toBe(1);
    await opened.context.close();
  });

  it("pages a long column, counting every matching task in its header", async ({ server, builder, browser }) => {
    for (let index = 0; index < 30; index++) await server.request("/tasks", { as: builder, body: { title: `Backlog item ${index}`, tags: ["backlog"], project: null } });
    // Three more off the backlog, so the header's count shows when the (debounced) filter applies.
    for (let index = 0; index < 3; index++) await server.request("/tasks", { as: builder, body: { title: `Other item ${index}`, project: null } });
    const opened = await openPage(browser);
    const page = await signIn(server, opened);
    await page.locator(".filters").getByLabel("Tag", { exact: true }).fill("backlog");
    const open = page.locator(".column-open");
    await expect.poll(() => open.locator(".column-title .count").textContent(), { timeout: 5000 }).toBe("30");
    await expect.poll(() => open.locator(".task-card").count()).toBe(25);
    // The next page is held back while a live event refreshes the column: the refresh must
    // still bring the page the user asked for, not take it back.
    let heldPage: () => void = () => undefined;
    const pageHeld = new Promise<void>((resolve) => (heldPage = resolve));
    await page.route(/\/tasks\?.*cursor=/, async (route) => {
      heldPage();
      await new Promise((resolve) => setTimeout(resolve, 1500));
      await route.continue();
    });
    await open.getByRole("button", { name: "Load more" }).click();
    await pageHeld;
    await server.request("/tasks", { as: builder, body: { title: "Not on the backlog", project: null } });
    await expect.poll(() => open.locator(".task-card").count(), { timeout: 5000 }).toBe(30);
    await page.waitForTimeout(1500);
    expect(await open.locator(".task-card").count()).toBe(30);
    expect(await page.locator(".column-claimed .column-title .count").textContent()).toBe("0");
    await opened.context.close();
  });

  it("marks a blocked task, names its dependency, and unmarks it when the dependency completes", async ({ server, builder, browser }) => {
    const first = await server.request<Task>("/tasks", { as: builder, body: { title: "Migrate the orders table", project: null } });
    const second = await server.request<Task>("/tasks", { as: builder, body: { title: "Drop the old orders view", depends_on: [first.body.id], project: null } });
    const opened = await openPage(browser);
    const page = await signIn(server, opened);
    const blocked = page.locator(`[data-task-id="${second.body.id}"]`);
    await blocked.waitFor();
    expect(await blocked.getAttribute("class")).toContain("is-blocked");
    expect(await blocked.locator(".pill-blocked").textContent()).toBe("blocked");
    expect(await blocked.locator(".deps").textContent()).toContain("Migrate the orders table");

    await blocked.getByRole("button", { name: "Drop the old orders view" }).click();
    const detail = page.getByRole("dialog", { name: "Drop the old orders view" });
    expect(await detail.textContent()).toContain("cannot be claimed until every task it depends on is completed");
    expect(await detail.getByRole("button", { name: "Claim" }).count()).toBe(0);
    await page.keyboard.press("Escape");

    await server.request(`/tasks/${first.body.id}/claim`, { as: builder, method: "POST" });
    await server.request(`/tasks/${first.body.id}/complete`, { as: builder, body: {} });
    await page.locator(`[data-task-id="${second.body.id}"]:not(.is-blocked)`).waitFor({ timeout: 5000 });
    expect(await blocked.locator(".pill-blocked").count()).toBe(0);
    await opened.context.close();
  });

  it("shows the API's reason when an action is refused", async ({ server, builder, browser }) => {
    const task = await server.request<Task>("/tasks", { as: builder, body: { title: "Contested task", project: null } });
    const opened = await openPage(browser);
    // Without the event stream the page cannot learn of the other claim before the click.
    await opened.page.route("**/events/stream", (route) => route.abort());
    const page = await signIn(server, opened);
    await page.locator(`[data-task-id="${task.body.id}"]`).getByRole("button", { name: "Contested task" }).click();
    const detail = page.getByRole("dialog", { name: "Contested task" });
    await detail.getByRole("button", { name: "Claim" }).waitFor();
    await server.request(`/tasks/${task.body.id}/claim`, { as: builder, method: "POST" });
    await detail.getByRole("button", { name: "Claim" }).click();
    const alert = detail.getByRole("alert");
    await alert.waitFor();
    expect(await alert.textContent()).toBe("task not open");
    await opened.context.close();
  });
});
