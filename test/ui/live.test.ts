import { connect, createServer, type Server, type Socket } from "node:net";
import type { Page } from "playwright-core";
import { expect } from "vitest";
import { openPage, describeInBrowser, type OpenPage } from "../helpers/browser.js";
import { test, signIn as signInAs } from "../helpers/ui.js";

const PASSWORD = "live updates password";

async function signIn(baseUrl: string, opened: OpenPage, tab: string): Promise<Page> {
  const page = await signInAs(opened.page, baseUrl, PASSWORD, tab, '.live-status:has-text("Live")');
  // A marker that a reload would wipe: the updates below must arrive without one.
  await page.evaluate("window.notReloaded = true");
  return page;
}

/** A TCP relay in front of the server whose connections can be cut, as a network drop would. */
async function relay(target: URL): Promise<{ url: string; drop: () => void; close: () => Promise<void> }> {
  const sockets = new Set<Socket>();
  const server: Server = createServer((client) => {
    const upstream = connect(Number(target.port), target.hostname);
    for (const socket of [client, upstream]) {
      sockets.add(socket);
      socket.on("close", () => sockets.delete(socket));
      socket.on("error", () => socket.destroy());
    }
    client.pipe(upstream).pipe(client);
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const address = server.address();
  if (address === null || typeof address === "string") throw new Error("relay has no port");
  return {
    url: `http://127.0.0.1:${address.port}`,
    drop: () => {
      for (const socket of sockets) socket.destroy();
    },
    close: () =>
      new Promise((resolve) => {
        for (const socket of sockets) socket.destroy();
        server.close(() => resolve());
      }),
  };
}

const stillSamePage = (page: Page) => page.evaluate<boolean>("window.notReloaded === true");

describeInBrowser("Live updates from the event stream", () => {
  const it = test.extend("builder", ({ server }) => server.agent("builder"));
  it.override("serverEnv", { UI_PASSWORD: PASSWORD });

  it("shows a task another agent creates, then moves it to Claimed when it is claimed, without a reload", async ({ server, builder, browser }) => {
    const opened = await openPage(browser);
    const page = await signIn(server.url, opened, "tasks");
    await page.locator(".column-open").getByText("No open task.").waitFor();

    const task = await server.request<{ id: string }>("/tasks", { as: builder, body: { title: "Rotate the TLS certificates", project: null } });
    const inOpen = page.locator(`.column-open [data-task-id="${task.body.id}"]`);
    await inOpen.waitFor({ timeout: 5000 });
    expect(await inOpen.textContent()).toContain("Rotate the TLS certificates");

    expect((await server.request(`/tasks/${task.body.id}/claim`, { as: builder, method: "POST" })).status).toBe(200);
    await page.locator(`.column-claimed [data-task-id="${task.body.id}"]`).waitFor({ timeout: 5000 });
    await inOpen.waitFor({ state: "detached" });
    expect(await page.locator(`.column-claimed [data-task-id="${task.body.id}"]`).textContent()).toContain("builder");
    expect(await stillSamePage(page)).toBe(true);
    await opened.context.close();
  });

  it("shows a message sent over REST in the inbox as it arrives, and marks it read", async ({ server, builder, browser }) => {
    const opened = await openPage(browser);
    const page = await signIn(server.url, opened, "messages");
    await page.getByText("No unread message.").waitFor();

    const sent = await server.request<{ id: string }>("/messages", { as: builder, body: { to: "human", subject: "Deploy window", body: "Can I deploy at 16:00?" } });
    const message = page.locator(`[data-message-id="${sent.body.id}"]`);
    await message.waitFor({ timeout: 5000 });
    expect(await message.textContent()).toContain("Can I deploy at 16:00?");
    expect(await stillSamePage(page)).toBe(true);

    await message.getByRole("button", { name: "Mark read" }).click();
    await message.waitFor({ state: "detached" });
    const stored = await server.request<{ read: boolean }>(`/messages/${sent.body.id}`, { as: server.owner });
    expect(stored.body.read).toBe(true);
    await opened.context.close();
  });

  it("sends a message to an agent from the compose form", async ({ server, builder, browser }) => {
    const opened = await openPage(browser);
    const page = await signIn(server.url, opened, "messages");
    await page.getByRole("button", { name: "New message" }).click();
    const dialog = page.getByRole("dialog", { name: "New message" });
    await dialog.getByLabel("Agent").selectOption("builder");
    await dialog.getByLabel("Message").fill("Please hold the deploy until 17:00.");
    await dialog.getByRole("button", { name: "Send" }).click();
    await dialog.waitFor({ state: "detached" });
    const inbox = await server.request<{ body: string; from: string }[]>("/messages/inbox", { as: builder });
    expect(inbox.body).toEqual(expect.arrayContaining([expect.objectContaining({ from: "human", body: "Please hold the deploy until 17:00." })]));
    await opened.context.close();
  });

  it("sends to everyone and to a project's members from the compose form", async ({ server, builder, browser }) => {
    expect((await server.request("/projects", { as: builder, body: { name: "Ops Room" } })).status).toBe(201);
    const opened = await openPage(browser);
    const page = await signIn(server.url, opened, "messages");
    const send = async (kind: string, text: string, project?: string) => {
      await page.getByRole("button", { name: "New message" }).click();
      const dialog = page.getByRole("dialog", { name: "New message" });
      await dialog.getByLabel("Send to").selectOption(kind);
      if (project !== undefined) await dialog.getByLabel("Project").selectOption(project);
      await dialog.getByLabel("Message").fill(text);
      await dialog.getByRole("button", { name: "Send" }).click();
      await dialog.waitFor({ state: "detached" });
    };
    await send("broadcast", "Freeze starts at noon for everyone.");
    await send("project", "Ops room: the pager rota changed.", "ops-room");
    const inbox = await server.request<{ body: string; to: string }[]>("/messages/inbox", { as: builder });
    expect(inbox.body).toEqual(
      expect.arrayContaining([
        expect.objectContaining({ to: "broadcast", body: "Freeze starts at noon for everyone." }),
        expect.objectContaining({ to: "project:ops-room", body: "Ops room: the pager rota changed." }),
      ]),
    );
    await opened.context.close();
  });

  it("filters the stream by type family and by agent, for history and live events alike", async ({ server, builder, browser }) => {
    const reviewer = await server.agent("reviewer");
    const ownTask = await server.request<{ id: string }>("/tasks", { as: builder, body: { title: "Filter me in", project: null } });
    await server.request("/memory", { as: builder, body: { content: "A note that the task filter hides.", project: null } });
    const opened = await openPage(browser);
    const page = await signIn(server.url, opened, "events");
    const types = () => page.locator(".event-item .event-type").allTextContents();
    const agents = () => page.locator(".event-item .event-agent").allTextContents();

    await page.getByLabel("Type or family").fill("task.*");
    // One read per try: two reads could see the unfiltered list, then the empty one of the reload.
    await expect
      .poll(async () => {
        const shown = await types();
        return shown.length > 0 && shown.every((type) => type.startsWith("task."));
      })
      .toBe(true);
    expect(await page.locator(".event-item", { hasText: ownTask.body.id.slice(0, 8) }).count()).toBeGreaterThan(0);
    await server.request("/memory", { as: builder, body: { content: "Another note, written while filtered.", project: null } });
    const live = await server.request<{ id: string }>("/tasks", { as: reviewer, body: { title: "Arrives live", project: null } });
    await page.locator(".event-item", { hasText: live.body.id.slice(0, 8) }).first().waitFor({ timeout: 5000 });
    expect((await types()).every((type) => type.startsWith("task."))).toBe(true);

    await page.getByLabel("Agent").selectOption("reviewer");
    await expect.poll(async () => [...new Set(await agents())]).toEqual(["reviewer"]);
    await server.request("/tasks", { as: builder, body: { title: "Hidden by the agent filter", project: null } });
    const second = await server.request<{ id: string }>("/tasks", { as: reviewer, body: { title: "Shown by the agent filter", project: null } });
    await page.locator(".event-item", { hasText: second.body.id.slice(0, 8) }).first().waitFor({ timeout: 5000 });
    expect([...new Set(await agents())]).toEqual(["reviewer"]);

    await page.getByLabel("Type or family").fill("task.");
    expect(await page.getByRole("alert").textContent()).toContain("Use an event type such as memory.written");
    await opened.context.close();
  });

  it("resumes after the connection drops and shows what happened meanwhile", async ({ server, builder, browser }) => {
    const cut = await relay(new URL(server.url));
    const opened = await openPage(browser);
    const page = await signIn(cut.url, opened, "events");
    const before = await server.request<{ id: string }>("/tasks", { as: builder, body: { title: "Before the drop", project: null } });
    await page.locator(".event-item", { hasText: before.body.id.slice(0, 8) }).first().waitFor({ timeout: 5000 });

    cut.drop();
    await page.locator('.live-status:has-text("Reconnecting")').waitFor({ timeout: 5000 });
    const during = await server.request<{ id: string }>("/tasks", { as: builder, body: { title: "While the stream was down", project: null } });
    await page.locator('.live-status:has-text("Live")').waitFor({ timeout: 15_000 });
    await page.locator(".event-item", { hasText: "task.created" }).filter({ hasText: during.body.id.slice(0, 8) }).first().waitFor({ timeout: 5000 });
    // Resumed with Last-Event-ID: the event from before the drop is shown once, not replayed again.
    expect(await page.locator(".event-item", { hasText: before.body.id.slice(0, 8) }).count()).toBe(1);
    expect(await stillSamePage(page)).toBe(true);
    await opened.context.close();
    await cut.close();
  });

  it("holds new events back while paused and shows them on resume", async ({ server, builder, browser }) => {
    const opened = await openPage(browser);
    const page = await signIn(server.url, opened, "events");
    await page.getByRole("button", { name: "Pause" }).click();
    const task = await server.request<{ id: string }>("/tasks", { as: builder, body: { title: "Paused event", project: null } });
    const resume = page.getByRole("button", { name: /Resume \(\d+ new\)/ });
    await resume.waitFor({ timeout: 5000 });
    expect(await page.locator(".event-item", { hasText: task.body.id.slice(0, 8) }).count()).toBe(0);
    await resume.click();
    await page.locator(".event-item", { hasText: task.body.id.slice(0, 8) }).first().waitFor();
    await opened.context.close();
  });
});
