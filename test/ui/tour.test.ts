import type { Page } from "playwright-core";
import { expect } from "vitest";
import { openPage, screenshot, describeInBrowser, type OpenPage } from "../helpers/browser.js";
import type { Credentials, TestServer } from "../helpers/server.js";
import { it, signIn as signInAs, styleOf } from "../helpers/ui.js";

const PASSWORD = "tour of the tabs";
const TABS = ["overview", "memory", "tasks", "messages", "events", "agents", "projects", "sessions", "archivist"] as const;
/** Buttons that open a form in a dialog, per tab. */
const FORMS: Partial<Record<(typeof TABS)[number], string>> = {
  memory: "New entry",
  tasks: "New task",
  messages: "New message",
  agents: "New agent",
  projects: "New project",
};

const signIn = (server: TestServer, opened: OpenPage, tab = "overview"): Promise<Page> => signInAs(opened.page, server.url, PASSWORD, tab);

/** The little of the DOM the page functions below use (the Node-side program has no DOM types). */
interface FormControl {
  labels: { length: number };
  outerHTML: string;
  getAttribute(name: string): string | null;
}

async function openTab(page: Page, tab: string): Promise<void> {
  await page.locator(`nav.tabs a[href="#/${tab}"]`).click();
  await page.locator(`nav.tabs a[href="#/${tab}"][aria-current="page"]`).waitFor();
  // Every panel ends its first load with content, an empty state or an error, never blank.
  await expect.poll(() => page.locator("main .loading").count(), { timeout: 10_000 }).toBe(0);
}

/** A small team with a bit of everything, so that no tab is empty in the screenshots. */
async function seed(server: TestServer): Promise<void> {
  const agent = async (id: string): Promise<Credentials> => server.agent(id);
  const as = (who: Credentials) => (path: string, body?: unknown, method?: string) =>
    server.request<{ id: string }>(path, { as: who, ...(body === undefined ? {} : { body }), ...(method ? { method } : {}) });
  const owner = as(server.owner);
  const builder = as(await agent("builder"));
  const reviewer = as(await agent("reviewer"));
  const archivist = as(server.archivist);

  await owner("/projects", { name: "checkout", description: "The checkout service and its payment flows" });
  await builder("/projects/checkout/join", {});
  await reviewer("/projects/checkout/join", {});
  await owner("/memory", { content: "Never push directly to main; open a pull request and wait for one review.", type: "directive", project: null, tags: ["git"] });
  await owner("/memory", { content: "All money amounts are integers in cents.", type: "directive", project: "checkout", tags: ["billing"] });
  await reviewer("/memory", { content: "The checkout service talks to the payment gateway through a queue; retries are idempotent by order id.", type: "doc", project: "checkout", tags: ["architecture"] });
  await builder("/memory", { content: "CI caches node_modules keyed on the lockfile hash.", project: "checkout", tags: ["ci"] });
  await builder("/memory", { content: "Coupon percentages were applied before tax instead of after.", project: "checkout", tags: ["billing", "bug"] });
  await archivist("/memory", { content: "# Synthesis: checkout\n\nThe team fixed coupon rounding and documented the payment queue.", type: "doc", project: "checkout", tags: ["synthesis"] });
  await archivist("/logs", { level: "info", source: "archivist", action: "pass", message: "scheduled pass: 5 entries in 1 projects, 0 model calls", details: { entries: 5 } });
  await archivist("/logs", { level: "warn", source: "archivist", action: "merge.failed", message: "the model did not answer in time", details: {} });

  const coupon = await owner("/tasks", { title: "Fix the coupon rounding", project: "checkout", priority: "high", tags: ["billing"] });
  await owner("/tasks", { title: "Release notes for 2.4", project: "checkout", depends_on: [coupon.body.id] });
  await owner("/tasks", { title: "Write the refunds runbook", project: "checkout" });
  const upgrade = await owner("/tasks", { title: "Upgrade Node in CI", project: "checkout", tags: ["ci"] });
  const dashboard = await owner("/tasks", { title: "Payment dashboard access", project: "checkout" });
  await builder(`/tasks/${coupon.body.id}/claim`, { comment: "on it" });
  await reviewer(`/tasks/${upgrade.body.id}/claim`, {});
  await reviewer(`/tasks/${upgrade.body.id}/complete`, { output: { pr: 412 } });
  await builder(`/tasks/${dashboard.body.id}/claim`, {});
  await builder(`/tasks/${dashboard.body.id}/fail`, { comment: "no access" });
  await builder("/messages", { to: "human", subject: "Rounding mode", body: "Banker's rounding or half-up for coupons?" });
  await reviewer("/messages", { to: "broadcast", body: "Staging is down for maintenance until 14:00." });
  await builder("/sessions/handoff", { summary: "Coupon rounding half done.", in_progress: ["coupon fix"], next_steps: ["tests for tax-inclusive prices"] });
}

describeInBrowser("Every tab", () => {
  it.override("serverEnv", { UI_PASSWORD: PASSWORD });

  it("is used without a request leaving the server's origin, a console error, or an unlabelled control", async ({ server, browser }) => {
    await seed(server);
    const opened = await openPage(browser);
    const page = await signIn(server, opened);
    const unlabelled: string[] = [];
    const checkLabels = async (where: string) => {
      const missing = await page
        .locator("input, select, textarea")
        .evaluateAll((controls: FormControl[]) =>
          controls
            .filter((control) => control.labels.length === 0 && !control.getAttribute("aria-label") && !control.getAttribute("aria-labelledby"))
            .map((control) => control.outerHTML.slice(0, 80)),
        );
      unlabelled.push(...missing.map((html) => `${where}: ${html}`));
    };

    for (const tab of TABS) {
      await openTab(page, tab);
      await checkLabels(tab);
      const form = FORMS[tab];
      if (form) {
        await page.getByRole("button", { name: form }).click();
        await page.getByRole("dialog").waitFor();
        await checkLabels(`${tab} form`);
        await page.keyboard.press("Escape");
        await page.getByRole("dialog").waitFor({ state: "detached" });
      }
    }
    await openTab(page, "memory");
    await page.getByLabel("Search memory (meaning and keywords)").fill("coupon rounding");
    await page.getByRole("button", { name: "Search", exact: true }).click();
    await page.locator(".memory-card .scores").first().waitFor();
    await page.locator(".memory-card").first().getByRole("button", { name: "Details" }).click();
    await page.getByRole("dialog").locator(".detail").waitFor();
    await page.keyboard.press("Escape");
    await openTab(page, "tasks");
    await page.getByRole("button", { name: "Fix the coupon rounding" }).first().click();
    await page.getByRole("dialog").locator(".comment-log").waitFor();
    await checkLabels("task detail");
    await page.keyboard.press("Escape");

    expect(unlabelled).toEqual([]);
    const origin = new URL(server.url).origin;
    const elsewhere = opened.requests.filter((url) => !url.startsWith(`${origin}/`) && !url.startsWith("data:"));
    expect(elsewhere).toEqual([]);
    expect(opened.requests.length).toBeGreaterThan(20);
    expect(opened.errors.filter((error) => !/status of 401/.test(error))).toEqual([]);
    await opened.context.close();
  });

  it("is captured at 1280×800 (and a few in dark and at 400 px) in test/ui/screenshots", async ({ server, browser }) => {
    await seed(server);
    const light = await openPage(browser);
    const page = await signIn(server, light);
    await screenshot(page, "tab-overview");
    for (const tab of TABS.slice(1)) {
      await openTab(page, tab);
      await page.waitForTimeout(300);
      await screenshot(page, `tab-${tab}`);
    }
    await light.context.close();

    const dark = await openPage(browser, { colorScheme: "dark" });
    const darkPage = await signIn(server, dark);
    for (const tab of ["overview", "memory", "tasks"]) {
      await openTab(darkPage, tab);
      await darkPage.waitForTimeout(300);
      await screenshot(darkPage, `dark-${tab}`);
    }
    await dark.context.close();

    const narrow = await openPage(browser, { viewport: { width: 400, height: 800 } });
    const narrowPage = await signIn(server, narrow);
    for (const tab of ["overview", "memory", "tasks"]) {
      await openTab(narrowPage, tab);
      await narrowPage.waitForTimeout(300);
      await screenshot(narrowPage, `narrow-${tab}`);
      const overflow = await narrowPage.evaluate<number>("document.documentElement.scrollWidth - document.documentElement.clientWidth");
      expect(overflow, `${tab} scrolls sideways at 400 px`).toBeLessThanOrEqual(0);
    }
    await narrow.context.close();
  });
});

describeInBrowser("The shell", () => {
  it.override("serverEnv", { UI_PASSWORD: PASSWORD });

  it("says so when the password is wrong, then signs in with the right one", async ({ server, browser }) => {
    const opened = await openPage(browser);
    const { page } = opened;
    await page.goto(`${server.url}/ui/`);
    await page.getByLabel("Password").fill("not the password");
    await page.getByRole("button", { name: "Sign in" }).click();
    const alert = page.getByRole("alert");
    await alert.waitFor();
    expect(await alert.textContent()).toContain("Wrong password");
    await screenshot(page, "login-wrong-password");
    await page.getByLabel("Password").fill(PASSWORD);
    await page.getByRole("button", { name: "Sign in" }).click();
    await page.locator(".app-header").waitFor();
    await opened.context.close();
  });

  it("signs out, and the session no longer works", async ({ server, browser }) => {
    const opened = await openPage(browser);
    const page = await signIn(server, opened);
    await page.getByRole("button", { name: "Sign out" }).click();
    await page.getByText("You signed out.").waitFor();
    // The context's request client carries the page's cookies.
    expect((await opened.context.request.get(`${server.url}/agents/me`)).status()).toBe(401);
    await opened.context.close();
  });

  it("remembers the chosen theme across reloads", async ({ server, browser }) => {
    const opened = await openPage(browser, { colorScheme: "light" });
    const page = await signIn(server, opened);
    const background = () => styleOf(page.locator("html"), "backgroundColor");
    const lightBackground = await background();
    await page.getByRole("button", { name: "Switch to dark theme" }).click();
    expect(await page.locator("html").getAttribute("data-theme")).toBe("dark");
    expect(await background()).not.toBe(lightBackground);
    await page.reload();
    await page.locator(".app-header").waitFor();
    expect(await page.locator("html").getAttribute("data-theme")).toBe("dark");
    expect(await page.getByRole("button", { name: "Switch to light theme" }).count()).toBe(1);
    await opened.context.close();
  });

  it("can be used from the keyboard, with a visible focus ring", async ({ server, browser }) => {
    const opened = await openPage(browser);
    const page = await signIn(server, opened);
    await page.locator("body").press("Tab");
    expect(await page.locator(":focus").textContent()).toBe("Skip to content");
    let reachedTabs = false;
    for (let step = 0; step < 12 && !reachedTabs; step++) {
      await page.keyboard.press("Tab");
      reachedTabs = (await page.locator(":focus").getAttribute("href")) === "#/memory";
    }
    expect(reachedTabs).toBe(true);
    expect(await styleOf(page.locator(":focus"), "outlineStyle")).not.toBe("none");
    expect(parseFloat(await styleOf(page.locator(":focus"), "outlineWidth"))).toBeGreaterThan(0);
    await page.keyboard.press("Enter");
    await page.locator('nav.tabs a[href="#/memory"][aria-current="page"]').waitFor();
    // The new tab's heading takes the focus, so the next Tab starts in its content.
    expect(await page.locator(":focus").textContent()).toBe("Memory");

    await page.getByRole("button", { name: "New entry" }).focus();
    await page.keyboard.press("Enter");
    await page.getByRole("dialog").waitFor();
    expect(await page.locator("dialog :focus").count()).toBe(1);
    await page.keyboard.press("Escape");
    await page.getByRole("dialog").waitFor({ state: "detached" });
    expect(await page.locator(":focus").textContent()).toBe("New entry");
    await opened.context.close();
  });
});

describeInBrowser("Signing in with the one-time link", () => {
  it("signs in from the link's fragment, drops the token from the address, and explains a second use", async ({ server, browser }) => {
    const token = new URL(await server.server.uiUrl()).hash;
    expect(token).toMatch(/^#login=/);
    const first = await openPage(browser);
    await first.page.goto(`${server.url}/ui/${token}`);
    await first.page.locator(".app-header").waitFor();
    expect(new URL(first.page.url()).hash).not.toContain("login=");
    await first.context.close();

    const second = await openPage(browser);
    await second.page.goto(`${server.url}/ui/${token}`);
    await second.page.getByText("The login link did not work").waitFor();
    await second.page.getByText("a link works once, for 24 hours").waitFor();
    await second.page.getByText("npx cairn ui-link").waitFor();
    expect(await second.page.getByLabel("Password").count()).toBe(0);
    await second.context.close();
  });
});
