import { randomUUID } from "node:crypto";
import { expect } from "vitest";
import { openPage, describeInBrowser } from "../helpers/browser.js";
import type { Credentials, TestServer } from "../helpers/server.js";
import { test, signIn } from "../helpers/ui.js";

const PASSWORD = "pulse password";

async function write(server: TestServer, as: Credentials, content: string, extra: Record<string, unknown> = {}): Promise<string> {
  const response = await server.request<{ id: string }>("/memory", { as, body: { content, allow_duplicate: true, ...extra } });
  expect(response.status, response.text).toBe(201);
  return response.body.id;
}

async function link(server: TestServer, as: Credentials, src: string, rel: string, dst: string): Promise<void> {
  const response = await server.request("/graph/edge", { as, body: { src, dst, rel } });
  expect(response.status, response.text).toBe(201);
}

/** The numbers a node was drawn with. */
interface DrawnNode {
  getAttribute(name: string): string | null;
}

describeInBrowser("Pulse tab", () => {
  const it = test
    .extend("alice", ({ server }) => server.agent("alice"))
    .extend("bob", ({ server }) => server.agent("bob"))
    .extend("carol", ({ server }) => server.agent("carol"));
  it.override("serverEnv", { UI_PASSWORD: PASSWORD });

  it("draws the graph by centrality and kind, lists the central, hot and conflicting entries and who is active, opens entries, and narrows to a project", async ({ server, alice, bob, carol, browser }) => {
    expect((await server.request("/projects", { as: alice, body: { name: "web" } })).status).toBe(201);
    expect((await server.request("/projects/web/join", { as: bob, method: "POST" })).status).toBe(200);
    expect((await server.request("/projects", { as: carol, body: { name: "ops" } })).status).toBe(201);
    expect((await server.request("/projects", { as: carol, body: { name: "quiet" } })).status).toBe(201);

    const hub = await write(server, alice, "Checkout has three steps: basket, payment, receipt.", { project: "web", tags: ["checkout"] });
    const step = await write(server, alice, "Step two validates the basket.", { project: "web", tags: ["checkout", "basket"] });
    const prices = await write(server, bob, "Prices are computed on the server, never in the browser.", { project: "web", tags: ["checkout", "pricing"] });
    const reuse = await write(server, bob, "The basket check reuses the price rules.", { project: "web", tags: ["basket"] });
    const wrong = await write(server, bob, "Step two is skipped for gift cards.", { project: "web", tags: ["checkout"] });
    const pager = await write(server, carol, "The pager rotates every Monday.", { project: "ops", tags: ["oncall"] });
    const secret = await write(server, alice, "Private: the checkout numbers look off.", { project: "web", scope: "agent", tags: ["checkout"] });
    await link(server, alice, step, "supports", hub);
    await link(server, bob, prices, "supports", hub);
    await link(server, bob, reuse, "derived_from", step);
    await link(server, bob, wrong, "contradicts", step);
    await link(server, alice, secret, "supports", hub);
    expect((await server.request("/projects/web/join", { as: carol, method: "POST" })).status).toBe(200);
    for (const reader of [bob, carol]) expect((await server.request(`/memory/${step}`, { as: reader })).status).toBe(200);
    const shared = [hub, step, prices, reuse, wrong, pager];
    // Compiled code takes part only when asked for.
    const unit = { path: "src/checkout.ts", symbol: "checkout", kind: "function", lang: "typescript", start_line: 1, end_line: 9, sha: "c".repeat(64), signature: "function checkout(): void", description: "Runs the three steps.", deps: [] };
    const compiled = await server.request<{ memory_ids: string[] }>("/compile", { as: alice, body: { project: "web", units: [unit] } });
    expect(compiled.status, compiled.text).toBe(200);

    const opened = await openPage(browser);
    const page = await signIn(opened.page, server.url, PASSWORD, "pulse", "main .pulse-graph");
    const graph = page.getByRole("group", { name: /^Knowledge graph: / });
    await expect.poll(() => graph.locator(".pulse-node").count()).toBe(shared.length);
    const withCode = page.getByLabel("Include compiled code");
    await withCode.check();
    await expect.poll(() => graph.locator(".pulse-node").count()).toBe(shared.length + 1);
    expect(await graph.locator(`.pulse-node[data-id="${compiled.body.memory_ids[0]}"]`).count()).toBe(1);
    await withCode.uncheck();
    await expect.poll(() => graph.locator(".pulse-node").count()).toBe(shared.length);
    const drawn = await graph.locator(".pulse-node").evaluateAll((nodes: DrawnNode[]) => nodes.map((node) => ({ id: node.getAttribute("data-id"), r: Number(node.getAttribute("data-r")) })));
    expect(drawn.map((node) => node.id).sort()).toEqual([...shared].sort());
    const largest = drawn.reduce((best, node) => (node.r > best.r ? node : best));
    expect(largest.id).toBe(hub);
    expect(await graph.locator(".pulse-edge.edge-supports").count()).toBe(2);
    expect(await graph.locator(".pulse-edge.edge-derived_from").count()).toBe(1);
    expect(await graph.locator(".pulse-edge.edge-contradicts").count()).toBe(1);
    expect(await graph.locator(".pulse-edge.edge-contradicts .edge-mark").count()).toBe(1);
    // Both ends of the contradiction are marked, and no one else.
    expect((await graph.locator(".pulse-node.is-conflict").evaluateAll((nodes: DrawnNode[]) => nodes.map((node) => node.getAttribute("data-id")))).sort()).toEqual([step, wrong].sort());
    expect(await graph.getByRole("button", { name: "Step two validates the basket." }).count()).toBe(1);

    // The private entry is nowhere: not drawn, not listed, not named.
    expect(await page.locator(`[data-id="${secret}"]`).count()).toBe(0);
    expect(await page.locator("main").innerText()).not.toContain("numbers look off");

    const central = page.locator("section", { has: page.getByRole("heading", { name: "Central" }) });
    expect(await central.locator("li").first().innerText()).toContain("Checkout has three steps");
    const hot = page.locator("section", { has: page.getByRole("heading", { name: "Hot this week" }) });
    await expect.poll(() => hot.locator("li").first().innerText()).toContain("Step two validates the basket.");
    expect(await hot.locator("li").first().innerText()).toContain("2 reads · 2 readers");
    const conflicts = page.locator("section", { has: page.getByRole("heading", { name: "Conflicts" }) });
    expect(await conflicts.getByRole("button", { name: "Step two is skipped for gift cards." }).count()).toBe(1);
    expect(await conflicts.getByRole("button", { name: "Step two validates the basket." }).count()).toBe(1);
    const activity = page.locator("section", { has: page.getByRole("heading", { name: "Who is active" }) });
    for (const agent of ["alice", "bob", "carol"]) expect(await activity.locator(".pulse-agent", { hasText: agent }).count()).toBe(1);
    expect(await activity.locator(".pulse-agent", { hasText: "bob" }).innerText()).toContain("3 writes");
    const affinities = page.locator("section", { has: page.getByRole("heading", { name: "Affinities" }) });
    expect(await affinities.locator(".pulse-affinity", { hasText: "bob" }).getByText("pricing").count()).toBe(1);
    expect(await page.getByText(/^Showing the \d+ most central/).count()).toBe(0);

    // A click on a node opens its entry; so does Enter on a focused node, and a conflict's label.
    await graph.locator(`.pulse-node[data-id="${hub}"]`).click();
    const dialog = page.getByRole("dialog", { name: `Entry ${hub.slice(0, 8)}` });
    await dialog.getByText("Checkout has three steps: basket, payment, receipt.").waitFor();
    await page.keyboard.press("Escape");
    await dialog.waitFor({ state: "detached" });
    const wrongNode = graph.getByRole("button", { name: "Step two is skipped for gift cards." });
    // In the tab order (an SVG element is focusable only through a `tabindex` attribute spelt so).
    expect(await wrongNode.evaluate((element) => (element as unknown as { tabIndex: number }).tabIndex)).toBe(0);
    await wrongNode.focus();
    await expect.poll(() => wrongNode.evaluate((element) => element === (globalThis as unknown as { document: { activeElement: unknown } }).document.activeElement)).toBe(true);
    await page.keyboard.press("Enter");
    await page.getByRole("dialog", { name: `Entry ${wrong.slice(0, 8)}` }).getByText("Step two is skipped for gift cards.").first().waitFor();
    await page.keyboard.press("Escape");
    await conflicts.getByRole("button", { name: "Step two validates the basket." }).click();
    await page.getByRole("dialog", { name: `Entry ${step.slice(0, 8)}` }).waitFor();
    await page.keyboard.press("Escape");

    // A project narrows the picture to its own entries; an empty project says so.
    await page.getByLabel("Project").selectOption("web");
    await expect.poll(() => graph.locator(".pulse-node").count()).toBe(5);
    expect(await graph.locator(`.pulse-node[data-id="${pager}"]`).count()).toBe(0);
    expect(await page.locator(".pulse-scope").innerText()).toContain("Project web.");
    expect(await central.locator("li").first().innerText()).toContain("Checkout has three steps");
    await page.getByLabel("Project").selectOption("quiet");
    await page.getByText("No shared entry here yet.").waitFor();
    expect(await page.locator(".pulse-graph").count()).toBe(0);
    await page.getByLabel("Project").selectOption("");
    await expect.poll(() => graph.locator(".pulse-node").count()).toBe(shared.length);

    const origin = new URL(server.url).origin;
    expect(opened.requests.filter((url) => !url.startsWith(`${origin}/`) && !url.startsWith("data:"))).toEqual([]);
    // Before signing in, the page's first question is answered 401.
    expect(opened.errors.filter((error) => !/status of 401/.test(error))).toEqual([]);
    await opened.context.close();
  });

  it("lays out a capped graph deterministically, inside the view, and says it is truncated", async ({ server, alice, browser }) => {
    expect((await server.request("/projects", { as: alice, body: { name: "big" } })).status).toBe(201);
    // 320 entries in a tree of supports with a few loose links: more than the 300 nodes a pulse draws.
    const ids = Array.from({ length: 320 }, () => randomUUID());
    const at = new Date().toISOString();
    const entry = (id: string, index: number) => ({
      kind: "entry", id, type: index % 10 === 0 ? "doc" : "memory", agent_id: "alice", project: "big", scope: "project",
      content: `Imported fact number ${index} about the big service.`, confidence: 1, parents: [], tags: [], headline: null,
      created_at: at, updated_at: at, version: 1, expires_at: null, read_count: 0, distinct_readers: 0, reinforcement_count: 0,
      last_reinforced_at: null, superseded_by: null, embedding_model: null,
    });
    const edge = (src: string, rel: string, dst: string) => ({ kind: "edge", id: randomUUID(), src, dst, rel, note: null, project: "big", agent_id: "alice", created_at: at, updated_at: at });
    const lines = [
      ...ids.map((id, index) => JSON.stringify(entry(id, index))),
      ...ids.slice(1).map((id, index) => JSON.stringify(edge(id, index % 4 === 3 ? "derived_from" : "supports", ids[Math.floor(index / 3)] as string))),
      ...ids.filter((_, index) => index % 2 === 1).map((id, index) => JSON.stringify(edge(id, "relates_to", ids[(index * 2 + 37) % ids.length] as string))),
    ];
    const imported = await server.request<{ errors: unknown[] }>("/admin/import", { as: server.owner, body: lines.join("\n"), headers: { "content-type": "application/x-ndjson" } });
    expect(imported.body.errors).toEqual([]);

    const positions = async () => {
      const opened = await openPage(browser, { viewport: { width: 400, height: 800 } });
      const page = await signIn(opened.page, server.url, PASSWORD, "pulse", "main .pulse-graph");
      const graph = page.getByRole("group", { name: /^Knowledge graph: / });
      await expect.poll(() => graph.locator(".pulse-node").count(), { timeout: 10_000 }).toBe(300);
      await page.getByText("Showing the 300 most central of 320 entries.").waitFor();
      const box = await graph.boundingBox();
      const nodes = await graph.locator(".pulse-node .node-shape").evaluateAll((shapes: { getBoundingClientRect(): { x: number; y: number; width: number; height: number } }[]) =>
        shapes.map((shape) => {
          const rect = shape.getBoundingClientRect();
          return { x: rect.x, y: rect.y, width: rect.width, height: rect.height };
        }),
      );
      const overflow = await page.evaluate<number>("document.documentElement.scrollWidth - document.documentElement.clientWidth");
      await opened.context.close();
      return { box, nodes, overflow, errors: opened.errors.filter((error) => !/status of 401/.test(error)) };
    };
    const first = await positions();
    const second = await positions();
    expect(second.nodes).toEqual(first.nodes);
    expect(first.overflow).toBeLessThanOrEqual(0);
    expect(first.errors).toEqual([]);
    const box = first.box;
    if (!box) throw new Error("no graph box");
    for (const node of first.nodes) {
      expect(node.x).toBeGreaterThanOrEqual(box.x - 0.5);
      expect(node.y).toBeGreaterThanOrEqual(box.y - 0.5);
      expect(node.x + node.width).toBeLessThanOrEqual(box.x + box.width + 0.5);
      expect(node.y + node.height).toBeLessThanOrEqual(box.y + box.height + 0.5);
    }
  });
});
