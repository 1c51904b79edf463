import type { Page } from "playwright-core";
import { expect } from "vitest";
import { openPage, describeInBrowser, type OpenPage } from "../helpers/browser.js";
import type { Credentials, TestServer } from "../helpers/server.js";
import { it, test, signIn as signInAs, styleOf } from "../helpers/ui.js";

// SEED-SPEC "UI behaviour for directives", rules 1 to 3.

const PASSWORD = "directive rules password";

const signIn = (server: TestServer, opened: OpenPage): Promise<Page> => signInAs(opened.page, server.url, PASSWORD, "memory");

const typesInOrder = async (page: Page) => Promise.all((await page.locator(".memory-card").all()).map((card) => card.getAttribute("data-type")));

async function typeOptionsOfWriteForm(page: Page): Promise<string[]> {
  await page.getByRole("button", { name: "New entry" }).click();
  const dialog = page.getByRole("dialog", { name: "New memory entry" });
  const options = await dialog.getByLabel("Type").locator("option").allTextContents();
  await dialog.getByRole("button", { name: "Cancel" }).click();
  return options;
}

describeInBrowser("Directives in the Memory tab", () => {
  const it = test
    // A directive, a doc and two memories, written oldest first in the opposite order of their
    // kinds, so newest-first alone would put memories first.
    .extend("ids", async ({ server }) => {
      const builder = await server.agent("builder");
      const written = async (as: Credentials, body: Record<string, unknown>): Promise<string> =>
        (await server.request<{ id: string }>("/memory", { as, body: { project: null, ...body } })).body.id;
      const directive = await written(server.owner, { content: "Every change needs a test", type: "directive" });
      const doc = await written(builder, { content: "How the release train works", type: "doc" });
      const memory = await written(builder, { content: "The flaky test is in cart.spec.ts" });
      await written(server.owner, { content: "A second memory, newest of all" });
      return { directive, doc, memory };
    });
  it.override("serverEnv", { UI_PASSWORD: PASSWORD });

  it("lists directives before docs before memories when no filter is chosen, whatever their age", async ({ server, ids, browser }) => {
    const opened = await openPage(browser);
    const page = await signIn(server, opened);
    await page.locator(".memory-card").nth(3).waitFor();
    const types = await typesInOrder(page);
    expect(types).toEqual(["directive", "doc", "memory", "memory"]);
    expect(await page.locator(".memory-card").first().getAttribute("data-entry-id")).toBe(ids.directive);
    await opened.context.close();
  });

  it("marks a directive with its own pill, an accent border, a lock in the card's header and no confidence meter", async ({ server, ids, browser }) => {
    const opened = await openPage(browser);
    const page = await signIn(server, opened);
    const directive = page.locator(`.memory-card[data-entry-id="${ids.directive}"]`);
    const memory = page.locator(`.memory-card[data-entry-id="${ids.memory}"]`);
    await directive.waitFor();

    expect(await directive.locator(".card-header .pill-directive").textContent()).toBe("directive");
    expect(await directive.locator(".card-header [data-lock] svg").count()).toBe(1);
    expect(await directive.locator("meter").count()).toBe(0);
    expect(await memory.locator("meter").count()).toBe(1);
    expect(await memory.locator(".pill-directive, [data-lock]").count()).toBe(0);

    expect(await styleOf(directive, "borderLeftColor")).not.toBe(await styleOf(memory, "borderLeftColor"));
    expect(parseFloat(await styleOf(directive, "borderLeftWidth"))).toBeGreaterThan(parseFloat(await styleOf(memory, "borderLeftWidth")));
    expect(await styleOf(directive.locator(".pill-directive"), "backgroundColor")).not.toBe(await styleOf(memory.locator(".pill-memory"), "backgroundColor"));
    await opened.context.close();
  });

  it("offers directive in the type filter, which then shows only directives", async ({ server, ids, browser }) => {
    const opened = await openPage(browser);
    const page = await signIn(server, opened);
    const filter = page.locator("fieldset.filters").getByLabel("Type");
    expect(await filter.locator("option").allTextContents()).toContain("directive");
    await filter.selectOption("directive");
    await page.locator(`.memory-card[data-entry-id="${ids.memory}"]`).waitFor({ state: "detached" });
    await page.locator(`.memory-card[data-entry-id="${ids.directive}"]`).waitFor();
    const types = await typesInOrder(page);
    expect(types).toEqual(["directive"]);
    await opened.context.close();
  });

  it("orders search results by score, best first, even when a directive also matches", async ({ server, ids, browser }) => {
    const opened = await openPage(browser);
    const page = await signIn(server, opened);
    // The memory matches "flaky", "cart" and "spec", the directive only "change" ("test", in both,
    // tells them apart by nothing): a directive-first order would lead with the weaker hit.
    await page.getByLabel("Search memory (meaning and keywords)").fill("flaky test cart spec change");
    await page.getByRole("button", { name: "Search", exact: true }).click();
    await page.locator(".memory-card .scores").first().waitFor();
    const cards = await page.locator(".memory-card").all();
    const scores = await Promise.all(cards.map(async (card) => Number(await card.locator(".scores strong").textContent())));
    expect(scores).toEqual([...scores].sort((a, b) => b - a));
    expect(await cards[0]?.getAttribute("data-entry-id")).toBe(ids.memory);
    expect(await typesInOrder(page)).toContain("directive");
    await opened.context.close();
  });

  it("offers directive in the write form to a directive writer, and writes one", async ({ server, browser }) => {
    const opened = await openPage(browser);
    const page = await signIn(server, opened);
    expect(await typeOptionsOfWriteForm(page)).toContain("directive");

    await page.getByRole("button", { name: "New entry" }).click();
    const dialog = page.getByRole("dialog", { name: "New memory entry" });
    await dialog.getByLabel("Content").fill("Ask before adding a dependency");
    await dialog.getByLabel("Type").selectOption("directive");
    await dialog.getByRole("button", { name: "Save", exact: true }).click();
    await dialog.locator('[data-verdict="new"]').waitFor();
    await dialog.getByRole("button", { name: "Done" }).click();
    await page.locator('.memory-card[data-type="directive"]', { hasText: "Ask before adding a dependency" }).waitFor();
    await opened.context.close();
  });
});

describeInBrowser("The write form for an agent outside DIRECTIVE_WRITERS", () => {
  it.override("serverEnv", { UI_PASSWORD: PASSWORD, DIRECTIVE_WRITERS: "someone-else" });

  it("does not offer directive as a type, but still shows directives and filters by them", async ({ server, browser }) => {
    await server.request("/memory", { as: server.owner, body: { content: "Written before the rules changed", project: null } });
    const opened = await openPage(browser);
    const page = await signIn(server, opened);
    const me = await server.request<{ can_write_directives: boolean }>("/agents/me", { as: server.owner });
    expect(me.body.can_write_directives).toBe(false);

    const options = await typeOptionsOfWriteForm(page);
    expect(options).not.toContain("directive");
    expect(options).toEqual(expect.arrayContaining(["memory", "doc"]));
    expect(await page.locator("fieldset.filters").getByLabel("Type").locator("option").allTextContents()).toContain("directive");
    await opened.context.close();
  });
});
