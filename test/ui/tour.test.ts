import { createHash } from "node:crypto";
import type { Page } from "playwright-core";
import { expect } from "vitest";
import { openPage, screenshot, describeInBrowser, type OpenPage } from "../helpers/browser.js";
import type { Credentials, TestServer } from "../helpers/server.js";
import { it, signIn as signInAs, styleOf } from "../helpers/ui.js";

const PASSWORD = "tour of the tabs";
const TABS = ["overview", "memory", "pulse", "tasks", "blueprints", "decisions", "feeds", "messages", "events", "agents", "projects", "sessions", "archivist"] as const;
/** Buttons that open a form in a dialog, per tab. */
const FORMS: Partial<Record<(typeof TABS)[number], string>> = {
  memory: "New entry",
  tasks: "New task",
  feeds: "Subscribe to a feed",
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

/** Scrolls a dialog's section to the top of the dialog, just below its sticky header. */
interface DialogSection {
  scrollIntoView(options: { block: "start" }): void;
  closest(selector: string): { scrollBy(x: number, y: number): void; querySelector(selector: string): { offsetHeight: number } | null } | null;
}
const scrollBelowHeader = (section: DialogSection): void => {
  section.scrollIntoView({ block: "start" });
  const dialog = section.closest("dialog");
  dialog?.scrollBy(0, -((dialog.querySelector(".dialog-header")?.offsetHeight ?? 0) + 8));
};

async function openTab(page: Page, tab: string): Promise<void> {
  await page.locator(`nav.tabs a[href="#/${tab}"]`).click();
  await page.locator(`nav.tabs a[href="#/${tab}"][aria-current="page"]`).waitFor();
  // Every panel ends its first load with content, an empty state or an error, never blank.
  await expect.poll(() => page.locator("main .loading").count(), { timeout: 10_000 }).toBe(0);
}

/** A small team with a bit of everything, so that no tab is empty in the screenshots; returns the run waiting for approval. */
async function seed(server: TestServer): Promise<string> {
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

  // Decisions: a chain on the coupon task (the second supersedes the first), and one on its own.
  const bug = (await server.request<{ id: string }[]>("/memory?tag=bug", { as: server.owner })).body[0]?.id ?? "";
  const halfUp = await builder("/decisions", {
    decision: "Round coupon discounts half-up to the cent",
    rationale: "Customers see the rounded amount on the receipt, and half-up is what the finance team reconciles against.",
    project: "checkout",
    task_id: coupon.body.id,
    alternatives: [{ option: "Banker's rounding", reason_rejected: "nobody outside engineering expects it" }, "Truncate to the cent"],
    memory_refs: [bug],
    tags: ["billing"],
  });
  await reviewer("/decisions", {
    decision: "Apply coupons after tax, rounding half-up per line item",
    rationale:
      "Rounding the order total hid a one-cent drift on orders with many lines; per line item, each line matches what the payment gateway charges.\n\nApplying the discount after tax is what the finance team asked for, and it is how the bug entry says the coupon should have worked from the start.\n\nThe receipts already show per-line amounts, so nothing changes for customers except that the totals now add up.",
    project: "checkout",
    task_id: coupon.body.id,
    supersedes: halfUp.body.id,
    alternatives: [
      { option: "Round the order total once", reason_rejected: "one-cent drift against the gateway" },
      { option: "Keep applying before tax", reason_rejected: "contradicts finance's rules" },
    ],
    memory_refs: [bug],
    tags: ["billing", "rounding"],
  });
  await reviewer("/decisions", {
    decision: "Pin Node 22 in CI and in the Dockerfile",
    rationale: "One version everywhere; 22 is the active LTS.",
    project: "checkout",
    task_id: upgrade.body.id,
    alternatives: [{ option: "Follow the latest release", reason_rejected: "breaks the native modules without warning" }],
    tags: ["ci"],
  });
  await seedCompile(server);
  return seedBlueprints(server);
}

interface SeededRun {
  id: string;
  nodes: { key: string; task_id: string | null }[];
}

/**
 * Blueprints and runs: a release plan at its second version (build, test and lint, a human gate, a
 * publish per region, an announcement), one run waiting for the human's approval, an older one done,
 * and a hotfix run cancelled.
 */
async function seedBlueprints(server: TestServer): Promise<string> {
  const builder = await server.agent("release-bot");
  await server.request("/projects/checkout/join", { as: builder, method: "POST" });
  const post = async <T>(path: string, body: unknown): Promise<T> => {
    const response = await server.request<T>(path, { as: builder, body });
    expect(response.status, response.text).toBeLessThan(300);
    return response.body;
  };
  const finish = async (run: SeededRun, key: string) => {
    const task = run.nodes.find((node) => node.key === key)?.task_id ?? "";
    await post(`/tasks/${task}/claim`, {});
    await post(`/tasks/${task}/complete`, {});
  };
  const release = (lint: boolean) => ({
    name: "release",
    project: "checkout",
    title: "Release the checkout service",
    description: "Build and check a version, wait for a human's go, then publish it region by region and announce it.",
    params: [
      { name: "version", type: "string", required: true, description: "the version to release" },
      { name: "regions", type: "array", required: true, description: "where to publish it" },
    ],
    nodes: [
      { id: "build", title: "Build {{params.version}}", needs: [] },
      { id: "test", title: "Contract tests", needs: ["build"] },
      ...(lint ? [{ id: "lint", title: "Lint and types", needs: ["build"] }] : []),
      { id: "approve", title: "Go for {{params.version}}", needs: lint ? ["test", "lint"] : ["test"], gate: { kind: "human" } },
      { id: "publish", title: "Publish to {{item}}", needs: ["approve"], foreach: { from: "params.regions", max_items: 10 } },
      { id: "announce", title: "Announce {{params.version}}", needs: ["publish"] },
    ],
  });
  await post("/blueprints", release(false));
  const older = await post<SeededRun>("/blueprints/release/instantiate", { project: "checkout", params: { version: "2.3.9", regions: ["eu-west", "us-east"] } });
  for (const key of ["build", "test"]) await finish(older, key);
  const gate = older.nodes.find((node) => node.key === "approve")?.task_id ?? "";
  await server.request(`/tasks/${gate}/claim`, { as: server.owner, body: {} });
  await server.request(`/tasks/${gate}/complete`, { as: server.owner, body: {} });
  for (const key of ["publish[0]", "publish[1]", "announce"]) await finish(older, key);

  await post("/blueprints", release(true));
  await post("/blueprints", {
    name: "hotfix",
    project: "checkout",
    title: "Ship a hotfix",
    description: "Patch, review, deploy everywhere at once.",
    nodes: [
      { id: "patch", title: "Patch", needs: [] },
      { id: "review", title: "Review the patch", needs: ["patch"] },
      { id: "deploy", title: "Deploy", needs: ["review"] },
    ],
  });
  const hotfix = await post<SeededRun>("/blueprints/hotfix/instantiate", { project: "checkout", params: {} });
  await finish(hotfix, "patch");
  await server.request(`/blueprints/runs/${hotfix.id}/cancel`, { as: server.owner, method: "POST" });

  const current = await post<SeededRun>("/blueprints/release/instantiate", { project: "checkout", params: { version: "2.4.0", regions: ["eu-west", "us-east", "ap-south"] } });
  for (const key of ["build", "test", "lint"]) await finish(current, key);
  return current.id;
}

/** Code compiled into memory, with an entry grounded in a function that then changed: it is stale. */
async function seedCompile(server: TestServer): Promise<void> {
  const ci = await server.agent("ci");
  const builder = await server.agent("pricing-dev");
  for (const agent of [ci, builder]) await server.request("/projects/checkout/join", { as: agent, method: "POST" });
  const sha = (text: string) => createHash("sha256").update(text).digest("hex");
  const unit = (symbol: string, at: string, description: string) => ({ path: "src/cart/price.ts", symbol, kind: "function", lang: "typescript", start_line: 10, end_line: 42, sha: sha(at), description, deps: [] });
  const compile = async (commit: string, units: ReturnType<typeof unit>[]) => (await server.request<{ memory_ids: string[] }>("/compile", { as: ci, body: { project: "checkout", commit, units } })).body.memory_ids;
  const [priceOf, applyCoupon] = await compile("9c1e4b7", [
    unit("priceOf", "v1", "priceOf(cart: Cart): Cents — the cart's total, tax per line item"),
    unit("applyCoupon", "v1", "applyCoupon(line: Line, coupon: Coupon): Line — the discount after tax"),
  ]);
  const write = async (content: string, tags: string[]) => (await server.request<{ id: string }>("/memory", { as: builder, body: { content, project: "checkout", tags } })).body.id;
  const totals = await write("priceOf sums each line's price and tax in integer cents; it never rounds the total.", ["pricing", "billing"]);
  const coupons = await write("applyCoupon works on a single line after tax and rounds half-up to the cent.", ["pricing", "coupons"]);
  await server.request("/graph/edge", { as: builder, body: { src: priceOf, dst: totals, rel: "grounds" } });
  await server.request("/graph/edge", { as: builder, body: { src: applyCoupon, dst: coupons, rel: "grounds" } });
  await compile("d83f0a2", [unit("priceOf", "v2", "priceOf(cart: Cart, region: Region): Cents — the cart's total, tax per line item and region")]);
}

/** A knowledge graph for the Pulse tab: a few dozen linked entries in checkout, some read often. */
async function seedGraph(server: TestServer): Promise<void> {
  // New agents: seed() keeps the keys of its own.
  const builder = await server.agent("frontend");
  const reviewer = await server.agent("architect");
  const payments = await server.agent("payments");
  for (const agent of [builder, reviewer, payments]) await server.request("/projects/checkout/join", { as: agent, method: "POST" });
  const who = { builder, reviewer, payments };
  const ids: Record<string, string> = {};
  const facts: [key: string, by: keyof typeof who, tags: string[], content: string][] = [
    ["flow", "reviewer", ["architecture"], "Checkout runs in three steps: basket, payment, receipt."],
    ["queue", "payments", ["payments", "architecture"], "Payment calls go through a durable queue, never straight to the gateway."],
    ["idem", "payments", ["payments"], "Every payment call carries the order id as its idempotency key."],
    ["retry", "payments", ["payments"], "The worker retries a failed payment call three times with backoff."],
    ["retry5", "payments", ["payments"], "Retries back off 1 s, 5 s, 25 s, then the order is parked."],
    ["parked", "reviewer", ["payments", "runbook"], "Parked orders show up in the ops dashboard for a human."],
    ["basket", "builder", ["basket"], "Step one validates the basket against live stock."],
    ["stock", "builder", ["basket"], "Stock comes from the inventory service, cached for 30 seconds."],
    ["stale", "builder", ["basket", "bug"], "A stale stock cache let two customers buy the last item."],
    ["reserve", "builder", ["basket"], "The basket reserves stock for ten minutes once payment starts."],
    ["cents", "reviewer", ["billing"], "Prices are computed on the server, in integer cents."],
    ["tax", "reviewer", ["billing", "tax"], "Tax is computed per line item, then summed."],
    ["couponAfter", "builder", ["billing", "coupons"], "Coupons apply after tax, rounded half-up per line item."],
    ["couponBefore", "builder", ["billing", "coupons"], "Coupons apply before tax, on the order total."],
    ["giftcards", "payments", ["payments", "giftcards"], "Gift cards are a payment method, not a discount."],
    ["giftSkip", "builder", ["giftcards"], "Gift card orders skip the stock reservation step."],
    ["receipt", "reviewer", ["receipts"], "The receipt lists every line with its tax and discount."],
    ["receiptMail", "reviewer", ["receipts"], "Receipts are mailed by the notifications worker, not checkout."],
    ["pdf", "builder", ["receipts"], "Receipt PDFs are rendered on demand and cached for a day."],
    ["gateway", "payments", ["payments"], "The gateway answers 409 for a repeated idempotency key."],
    ["refunds", "payments", ["payments", "refunds"], "Refunds reuse the payment queue with their own key prefix."],
    ["refundsKey", "payments", ["payments", "refunds"], "A refund's idempotency key is the refund id, never the order id."],
    ["ci", "builder", ["ci"], "CI runs the checkout contract tests against the gateway sandbox."],
    ["sandbox", "payments", ["ci", "payments"], "The gateway sandbox is flaky on Monday mornings."],
    ["flags", "reviewer", ["release"], "New checkout steps ship behind a feature flag per market."],
    ["metrics", "reviewer", ["observability"], "Checkout emits one span per step, tagged with the order id."],
    ["alerts", "reviewer", ["observability", "runbook"], "Alert when more than 1% of payments are parked in an hour."],
    ["currency", "builder", ["billing"], "Amounts carry their currency; there is no default currency."],
    ["rounding", "builder", ["billing", "coupons"], "Rounding happens once, at the line item, never on totals."],
    ["address", "builder", ["receipts"], "The billing address is copied onto the order at payment time."],
  ];
  for (const [key, by, tags, content] of facts) {
    ids[key] = (await server.request<{ id: string }>("/memory", { as: who[by], body: { content, project: "checkout", tags, allow_duplicate: true } })).body.id;
  }
  const links: [src: string, rel: string, dst: string][] = [
    ["queue", "supports", "flow"], ["basket", "supports", "flow"], ["receipt", "supports", "flow"], ["cents", "supports", "flow"],
    ["idem", "supports", "queue"], ["retry", "supports", "queue"], ["retry5", "supersedes", "retry"], ["parked", "derived_from", "retry5"],
    ["gateway", "supports", "idem"], ["refunds", "derived_from", "queue"], ["refundsKey", "supports", "refunds"], ["refundsKey", "contradicts", "idem"],
    ["stock", "supports", "basket"], ["stale", "contradicts", "stock"], ["reserve", "supports", "basket"], ["reserve", "derived_from", "stale"],
    ["tax", "supports", "cents"], ["couponAfter", "supports", "tax"], ["couponBefore", "contradicts", "couponAfter"], ["couponAfter", "supersedes", "couponBefore"],
    ["rounding", "supports", "couponAfter"], ["rounding", "supports", "cents"], ["currency", "supports", "cents"],
    ["giftcards", "supports", "queue"], ["giftSkip", "relates_to", "giftcards"], ["giftSkip", "relates_to", "reserve"],
    ["receiptMail", "supports", "receipt"], ["pdf", "derived_from", "receipt"], ["address", "supports", "receipt"], ["tax", "relates_to", "receipt"],
    ["ci", "relates_to", "gateway"], ["sandbox", "relates_to", "ci"], ["flags", "supports", "flow"], ["metrics", "supports", "flow"],
    ["alerts", "derived_from", "metrics"], ["alerts", "relates_to", "parked"], ["metrics", "relates_to", "queue"],
  ];
  for (const [src, rel, dst] of links) await server.request("/graph/edge", { as: builder, body: { src: ids[src], dst: ids[dst], rel } });
  for (const [key, readers] of [["idem", [builder, reviewer]], ["couponAfter", [reviewer, payments]], ["flow", [builder, payments]], ["queue", [builder]], ["stale", [reviewer]]] as const) {
    for (const reader of readers) await server.request(`/memory/${ids[key]}`, { as: reader });
  }
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
    await page.getByRole("dialog").locator(".task-decisions .decision-card").first().waitFor();
    await page.getByRole("dialog").locator(".task-decisions").getByRole("button", { name: /^Open entry / }).first().click();
    await page.getByRole("dialog", { name: /^Entry / }).locator(".detail").waitFor();
    await page.keyboard.press("Escape");
    await page.getByRole("dialog", { name: /^Entry / }).waitFor({ state: "detached" });
    await page.keyboard.press("Escape");
    await openTab(page, "decisions");
    await page.getByLabel("Include superseded").check();
    await page.locator(".decision-card.is-superseded").waitFor();
    await page.locator(".decision-card .decision-toggle").first().click();
    await page.locator(".decision-card .decision-details").first().waitFor();
    await checkLabels("decisions, one open");
    await openTab(page, "blueprints");
    await page.locator(".blueprint-card .blueprint-toggle").first().click();
    await page.locator(".blueprint-card .plan-picture").first().waitFor();
    await checkLabels("blueprints, one open");
    await page.locator(".run-list .run-link").first().click();
    await page.locator(".run-view .plan-picture").waitFor();
    await checkLabels("a run");

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
    // The first tab as it settles: connected, every panel loaded.
    await page.locator('.live-status:has-text("Live")').waitFor();
    await expect.poll(() => page.locator("main .loading").count(), { timeout: 10_000 }).toBe(0);
    await page.waitForTimeout(300);
    await screenshot(page, "tab-overview");
    for (const tab of TABS.slice(1)) {
      await openTab(page, tab);
      await page.waitForTimeout(300);
      await screenshot(page, `tab-${tab}`);
    }
    // The Decisions tab with superseded decisions included and the coupon decision opened.
    await openTab(page, "decisions");
    await page.getByLabel("Include superseded").check();
    await page.locator(".decision-card.is-superseded").waitFor();
    await page.getByRole("button", { name: "Apply coupons after tax, rounding half-up per line item", exact: true }).click();
    await page.locator(".decision-card .decision-details").first().waitFor();
    await page.locator(".decision-task", { hasText: "Fix the coupon rounding" }).first().waitFor();
    await page.mouse.move(0, 0);
    await page.waitForTimeout(300);
    await screenshot(page, "decisions-open");
    // A task's page with its decisions.
    await openTab(page, "tasks");
    await page.getByRole("button", { name: "Fix the coupon rounding" }).first().click();
    const taskPage = page.getByRole("dialog", { name: "Fix the coupon rounding" });
    await taskPage.locator(".task-decisions .decision-card").first().waitFor();
    await taskPage.locator(".task-decisions").evaluate(scrollBelowHeader);
    await screenshot(page, "task-decisions");
    await page.keyboard.press("Escape");
    await light.context.close();

    const dark = await openPage(browser, { colorScheme: "dark" });
    const darkPage = await signIn(server, dark);
    for (const tab of ["overview", "memory", "tasks", "decisions"]) {
      await openTab(darkPage, tab);
      await darkPage.waitForTimeout(300);
      await screenshot(darkPage, `dark-${tab}`);
    }
    await darkPage.getByLabel("Include superseded").check();
    await darkPage.locator(".decision-card.is-superseded").waitFor();
    await darkPage.getByRole("button", { name: "Apply coupons after tax, rounding half-up per line item", exact: true }).click();
    await darkPage.locator(".decision-card .decision-details").first().waitFor();
    await darkPage.mouse.move(0, 0);
    await darkPage.waitForTimeout(300);
    await screenshot(darkPage, "dark-decisions-open");
    await dark.context.close();

    const narrow = await openPage(browser, { viewport: { width: 400, height: 800 } });
    const narrowPage = await signIn(server, narrow);
    for (const tab of ["overview", "memory", "tasks", "decisions"]) {
      await openTab(narrowPage, tab);
      await narrowPage.waitForTimeout(300);
      await screenshot(narrowPage, `narrow-${tab}`);
      const overflow = await narrowPage.evaluate<number>("document.documentElement.scrollWidth - document.documentElement.clientWidth");
      expect(overflow, `${tab} scrolls sideways at 400 px`).toBeLessThanOrEqual(0);
    }
    await narrowPage.getByLabel("Include superseded").check();
    await narrowPage.locator(".decision-card.is-superseded").waitFor();
    await narrowPage.locator(".decision-card .decision-toggle").first().click();
    await narrowPage.locator(".decision-card .decision-details").first().waitFor();
    await narrowPage.waitForTimeout(300);
    await screenshot(narrowPage, "narrow-decisions-open");
    expect(await narrowPage.evaluate<number>("document.documentElement.scrollWidth - document.documentElement.clientWidth"), "an open decision scrolls sideways at 400 px").toBeLessThanOrEqual(0);
    await openTab(narrowPage, "tasks");
    await narrowPage.getByRole("button", { name: "Fix the coupon rounding" }).first().click();
    const narrowTask = narrowPage.getByRole("dialog", { name: "Fix the coupon rounding" });
    await narrowTask.locator(".task-decisions .decision-card").first().waitFor();
    await narrowTask.locator(".task-decisions").evaluate(scrollBelowHeader);
    await screenshot(narrowPage, "narrow-task-decisions");
    expect(await narrowTask.evaluate((dialog: { scrollWidth: number; clientWidth: number }) => dialog.scrollWidth - dialog.clientWidth), "a task's decisions scroll sideways at 400 px").toBeLessThanOrEqual(0);
    await narrow.context.close();
  });
  it("captures the Pulse tab with a knowledge graph, in light, dark and at 400 px", async ({ server, browser }) => {
    await seed(server);
    await seedGraph(server);
    const shots: [name: string, options: Parameters<typeof openPage>[1]][] = [
      ["pulse", {}],
      ["dark-pulse", { colorScheme: "dark" }],
      ["narrow-pulse", { viewport: { width: 400, height: 800 } }],
      ["pulse-lists", { viewport: { width: 1280, height: 1500 } }],
    ];
    for (const [name, options] of shots) {
      const opened = await openPage(browser, options);
      const page = await signIn(server, opened, "pulse");
      await page.locator("main .pulse-graph .pulse-node").first().waitFor();
      await expect.poll(() => page.locator("main .loading").count(), { timeout: 10_000 }).toBe(0);
      await page.mouse.move(0, 0);
      await page.waitForTimeout(300);
      await screenshot(page, name);
      const overflow = await page.evaluate<number>("document.documentElement.scrollWidth - document.documentElement.clientWidth");
      expect(overflow, `${name} scrolls sideways`).toBeLessThanOrEqual(0);
      expect(opened.errors.filter((error) => !/status of 401/.test(error))).toEqual([]);
      await opened.context.close();
    }
  });
});

describeInBrowser("Blueprints and stale marks", () => {
  it.override("serverEnv", { UI_PASSWORD: PASSWORD });

  it("captures the Blueprints tab, a run's plan and stale memory, in light, dark and at 400 px", async ({ server, browser }) => {
    const run = await seed(server);
    const shots: [name: string, options: Parameters<typeof openPage>[1]][] = [
      ["", {}],
      ["dark-", { colorScheme: "dark" }],
      ["narrow-", { viewport: { width: 400, height: 800 } }],
    ];
    for (const [prefix, options] of shots) {
      const opened = await openPage(browser, options);
      const page = await signIn(server, opened, "blueprints");
      const sideways = () => page.evaluate<number>("document.documentElement.scrollWidth - document.documentElement.clientWidth");

      // The tab, the release blueprint opened to its versions and plan.
      await page.locator(".run-list .run-row").first().waitFor();
      const release = page.locator('.blueprint-card[data-blueprint="release"]');
      await release.locator(".blueprint-toggle").click();
      await release.locator(".plan-picture").waitFor();
      await page.mouse.move(0, 0);
      await page.waitForTimeout(300);
      // Tall enough in light to show the opened blueprint's plan under its versions.
      if (prefix === "") await page.setViewportSize({ width: 1280, height: 1180 });
      await screenshot(page, `${prefix}blueprints`);
      if (prefix === "") await page.setViewportSize({ width: 1280, height: 800 });
      expect(await sideways(), `${prefix}blueprints scrolls sideways`).toBeLessThanOrEqual(0);

      // The run waiting for approval.
      await page.goto(`${server.url}/ui/#/blueprints/runs/${run}`);
      await page.locator(".run-view .plan-picture [data-node-id]").first().waitFor();
      await page.getByRole("button", { name: /^Approve: / }).waitFor();
      await expect.poll(() => page.locator("main .loading").count(), { timeout: 10_000 }).toBe(0);
      await page.mouse.move(0, 0);
      await page.waitForTimeout(300);
      await screenshot(page, `${prefix}run-plan`);
      expect(await sideways(), `${prefix}run-plan scrolls sideways`).toBeLessThanOrEqual(0);
      if (prefix === "narrow-") {
        // Below the sticky header, which covers the top of the page.
        await page.locator(".run-plan").evaluate((section: { scrollIntoView(options: { block: "start" }): void; ownerDocument: { defaultView: { scrollBy(x: number, y: number): void }; querySelector(selector: string): { offsetHeight: number } | null } }) => {
          section.scrollIntoView({ block: "start" });
          section.ownerDocument.defaultView.scrollBy(0, -((section.ownerDocument.querySelector(".app-header")?.offsetHeight ?? 0) + 8));
        });
        await page.waitForTimeout(200);
        await screenshot(page, "narrow-run-plan-picture");
      }

      // Memory grounded in code that changed.
      await page.goto(`${server.url}/ui/#/memory`);
      await page.locator(".filters").getByLabel("Tag", { exact: true }).fill("pricing");
      await page.locator(".filters").getByLabel("Tag", { exact: true }).blur();
      await page.locator(".memory-card .pill-stale").waitFor({ timeout: 10_000 });
      await expect.poll(() => page.locator(".memory-card").count()).toBe(2);
      await page.mouse.move(0, 0);
      await page.waitForTimeout(300);
      await screenshot(page, `${prefix}memory-stale`);
      expect(await sideways(), `${prefix}memory-stale scrolls sideways`).toBeLessThanOrEqual(0);
      if (prefix === "") {
        await page.locator(".memory-card.is-stale").getByRole("button", { name: "Details" }).click();
        await page.getByRole("dialog").locator(".detail").waitFor();
        await screenshot(page, "memory-stale-detail");
        await page.keyboard.press("Escape");
        // A modal dialog makes the page behind it inert: filling the filter before it has closed does nothing.
        await page.getByRole("dialog").waitFor({ state: "hidden" });
        await page.locator(".filters").getByLabel("Tag", { exact: true }).fill("");
        await expect.poll(() => page.locator(".filters").getByLabel("Tag", { exact: true }).inputValue()).toBe("");
        await page.locator(".filters").getByLabel("Type").selectOption("compiled");
        await page.locator(".filters").getByLabel("Type").blur();
        await page.locator(".memory-card .compiled-source").first().waitFor();
        await page.waitForTimeout(300);
        await screenshot(page, "memory-compiled");
      }
      expect(opened.errors.filter((error) => !/status of 401/.test(error))).toEqual([]);
      await opened.context.close();
    }
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
