import { createHash } from "node:crypto";
import { expect } from "vitest";
import type { MemoryEntry as Entry } from "../../src/wire/memory.js";
import { openPage, describeInBrowser } from "../helpers/browser.js";
import type { Credentials, TestServer } from "../helpers/server.js";
import { test, signIn } from "../helpers/ui.js";

// CONTRACT §18 in the web UI: an entry grounded in code that changed wears a `stale` mark naming
// the symbol, its old and new sha and since when; a compiled entry names the code it describes.

const PASSWORD = "stale marks password";

const sha = (text: string): string => createHash("sha256").update(text).digest("hex");
const OLD = sha("function f() { return 1; }");
const NEW = sha("function f() { return 2; }");

/** Compiles one function, `src/a.ts::f`, at `at`; returns its compiled entry's id. */
async function compile(server: TestServer, as: Credentials, at: string): Promise<{ memory_ids: string[]; invalidated: string[] }> {
  const unit = { path: "src/a.ts", symbol: "f", kind: "function", lang: "typescript", start_line: 1, end_line: 3, sha: at, description: "f(): the price of the cart, in cents", deps: [] };
  const response = await server.request<{ memory_ids: string[]; invalidated: string[] }>("/compile", { as, body: { project: null, commit: "4f2a9c1e7d", units: [unit] } });
  expect(response.status, response.text).toBe(200);
  return response.body;
}

describeInBrowser("Stale marks", () => {
  const it = test.extend("builder", ({ server }) => server.agent("builder"));
  it.override("serverEnv", { UI_PASSWORD: PASSWORD });

  it("marks an entry stale, live, when the code that grounds it changes, names the code of a compiled entry, and clears the mark when the author updates it", async ({ server, builder, browser }) => {
    const compiled = (await compile(server, builder, OLD)).memory_ids[0] ?? "";
    const written = await server.request<Entry>("/memory", { as: builder, body: { content: "f() returns the cart's total in cents, taxes included.", project: null, tags: ["pricing"] } });
    expect(written.status, written.text).toBe(201);
    const entry = written.body.id;
    const linked = await server.request("/graph/edge", { as: builder, body: { src: compiled, dst: entry, rel: "grounds" } });
    expect(linked.status, linked.text).toBe(201);

    const opened = await openPage(browser);
    const page = await signIn(opened.page, server.url, PASSWORD, "memory", '.live-status:has-text("Live")');
    const card = page.locator(`.memory-card[data-entry-id="${entry}"]`);
    await card.waitFor({ timeout: 10_000 });
    expect(await card.locator(".pill-stale").count()).toBe(0);
    // Code is listed only when asked for: "all but code" is the default.
    const compiledCard = page.locator(`.memory-card[data-entry-id="${compiled}"]`);
    expect(await compiledCard.count()).toBe(0);
    const typeFilter = page.locator(".filters").getByLabel("Type");
    expect(await typeFilter.locator("option:checked").textContent()).toBe("all but code");
    await typeFilter.selectOption({ label: "all with code" });
    await compiledCard.waitFor({ timeout: 10_000 });
    await card.waitFor();
    expect(await compiledCard.locator(".compiled-source").textContent()).toBe(`compiled from src/a.ts::f at ${OLD.slice(0, 8)}, commit 4f2a9c1e7d`);
    // Only compile changes a compiled entry: the card offers no Edit, though its author may delete it.
    expect(await compiledCard.getByRole("button", { name: "Edit" }).count()).toBe(0);
    expect(await compiledCard.getByRole("button", { name: "Delete" }).count()).toBe(1);

    // The code changes: the entry it grounds is marked where it is shown, without a reload.
    expect((await compile(server, builder, NEW)).invalidated).toEqual([entry]);
    await card.locator(".pill-stale").waitFor({ timeout: 10_000 });
    expect(await card.getAttribute("class")).toContain("is-stale");
    expect(await card.getByRole("heading").textContent()).toContain("stale");
    const note = card.getByRole("note");
    expect(await note.textContent()).toMatch(new RegExp(`^Stale: src/a\\.ts::f changed \\(${OLD.slice(0, 8)} → ${NEW.slice(0, 8)}\\) (just now|\\d+ s ago)\\. Check it against the code, then update it\\.$`));
    expect(await note.locator("time").getAttribute("datetime")).toMatch(/^\d{4}-\d\d-\d\dT/);
    expect(await compiledCard.locator(".compiled-source").textContent()).toContain(`at ${NEW.slice(0, 8)}`);
    expect(await compiledCard.locator(".pill-stale").count()).toBe(0);
    const stale = await server.request<Entry[]>("/compile/stale?project=", { as: builder });
    expect(stale.body.map((row) => row.id)).toEqual([entry]);

    // Its details say the same, with the whole shas.
    await card.getByRole("button", { name: "Details" }).click();
    const detail = page.getByRole("dialog", { name: `Entry ${entry.slice(0, 8)}` });
    await detail.locator(".detail").waitFor();
    expect(await detail.locator(".pill-stale").textContent()).toBe("stale");
    const facts = await detail.locator(".facts").innerText();
    expect(facts).toContain("src/a.ts::f");
    expect(facts).toContain(OLD);
    expect(facts).toContain(NEW);
    await page.keyboard.press("Escape");
    await detail.waitFor({ state: "detached" });

    // The author brings it up to date: the mark goes.
    const updated = await server.request(`/memory/${entry}`, { as: builder, method: "PATCH", body: { content: "f() returns the cart's total in cents, taxes and discounts included." } });
    expect(updated.status, updated.text).toBe(200);
    await expect.poll(() => card.locator(".pill-stale").count(), { timeout: 10_000 }).toBe(0);
    expect(await card.getAttribute("class")).not.toContain("is-stale");
    expect(opened.errors.filter((error) => !/status of 401/.test(error))).toEqual([]);
    await opened.context.close();
  });
});
