import type { Page } from "playwright-core";
import { expect } from "vitest";
import { openPage, describeInBrowser } from "../helpers/browser.js";
import { test, signIn } from "../helpers/ui.js";

const PASSWORD = "overview password";

interface Counts {
  open: number;
  blocked: number;
  claimed: number;
}

/** The number on the Overview's card whose label is `label`. */
const stat = (page: Page, label: string) => page.locator("main a.stat", { has: page.locator(".stat-label", { hasText: new RegExp(`^${label}$`) }) }).locator(".stat-value");

describeInBrowser("Overview tab", () => {
  const it = test.extend("builder", ({ server }) => server.agent("builder"));
  it.override("serverEnv", { UI_PASSWORD: PASSWORD });

  it("shows the task counts, unread messages, each agent's claimed tasks and the archivist, and keeps them current", async ({ server, builder, browser }) => {
    const claimed = await server.request<{ id: string }>("/tasks", { as: builder, body: { title: "Fix the coupon rounding", project: null } });
    expect((await server.request(`/tasks/${claimed.body.id}/claim`, { as: builder, method: "POST" })).status).toBe(200);
    await server.request("/tasks", { as: builder, body: { title: "Release notes", depends_on: [claimed.body.id], project: null } });
    await server.request("/tasks", { as: builder, body: { title: "Write the runbook", project: null } });
    await server.request("/messages", { as: builder, body: { to: server.owner.agentId, body: "Rounding: banker's or half-up?" } });
    // What a working archivist says of itself: a lease and the state keys behind GET /archivist/status.
    const lease = await server.request<{ token: string }>("/archivist/lease", { as: server.archivist, body: { holder: "archivist-host-1", ttl_seconds: 60 } });
    const fenced = { "X-Archivist-Lease": lease.body.token };
    await server.request("/archivist/state/process", { as: server.archivist, method: "PUT", headers: fenced, body: { value: { llm: true, provider: "openai" } } });
    await server.request("/archivist/state/last_pass", { as: server.archivist, method: "PUT", headers: fenced, body: { value: { at: new Date().toISOString(), entries: 42, calls: 3, capturesDigested: 5 } } });

    const counts = (await server.request<Counts>("/tasks/counts", { as: server.owner })).body;
    expect(counts).toMatchObject({ open: 2, blocked: 1, claimed: 1 });
    const opened = await openPage(browser);
    const page = await signIn(opened.page, server.url, PASSWORD, "overview", '.live-status:has-text("Live")');
    await expect.poll(() => stat(page, "open tasks").textContent()).toBe(String(counts.open));
    expect(await stat(page, "blocked tasks").textContent()).toBe(String(counts.blocked));
    expect(await stat(page, "claimed tasks").textContent()).toBe(String(counts.claimed));
    // The unread count is a read of its own, which may answer after the task counts.
    await expect.poll(() => stat(page, "unread messages").textContent()).toBe("1");

    const online = page.locator(".online-agent", { hasText: "builder" });
    expect(await online.getByRole("link", { name: "Fix the coupon rounding" }).getAttribute("href")).toBe(`#/tasks/${claimed.body.id}`);
    const archivist = page.locator("section", { has: page.getByRole("heading", { name: "Archivist" }) });
    const facts = await archivist.locator("dl.facts").innerText();
    expect(facts).toContain("archivist-host-1");
    expect(facts).toContain("on (openai)");
    expect(facts).toContain("42 entries read");
    expect(facts).toContain("3 model calls");
    expect(facts).toContain("5 captures digested");

    // Live: another agent's changes move the numbers and the newest events without a reload.
    const fresh = await server.request<{ id: string }>("/tasks", { as: builder, body: { title: "Added while watching", project: null } });
    await expect.poll(() => stat(page, "open tasks").textContent(), { timeout: 5000 }).toBe(String(counts.open + 1));
    await server.request("/messages", { as: builder, body: { to: server.owner.agentId, body: "And the refunds?" } });
    await expect.poll(() => stat(page, "unread messages").textContent(), { timeout: 5000 }).toBe("2");
    const recent = page.locator("section", { has: page.getByRole("heading", { name: "Recent events" }) });
    expect(await recent.locator(".event-list li", { hasText: fresh.body.id.slice(0, 8) }).count()).toBeGreaterThan(0);
    expect(await recent.locator(".event-list li").first().innerText()).toContain("message.received");
    await opened.context.close();
  });
});
