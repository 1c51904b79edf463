import type { Page } from "playwright-core";
import { expect } from "vitest";
import type { MemoryEntry as Entry } from "../../src/wire/memory.js";
import { openPage, describeInBrowser, type OpenPage } from "../helpers/browser.js";
import type { TestServer } from "../helpers/server.js";
import { test, signIn as signInAs } from "../helpers/ui.js";

const PASSWORD = "memory tab password";

const signIn = (server: TestServer, opened: OpenPage, tab = "memory"): Promise<Page> => signInAs(opened.page, server.url, PASSWORD, tab);

/** Console errors other than the 401 of the first "who am I" before signing in, and those `expected`. */
const unexpected = (errors: string[], expected: RegExp[] = []) =>
  errors.filter((error) => !/status of 401/.test(error) && !expected.some((pattern) => pattern.test(error)));

const card = (page: Page, id: string) => page.locator(`.memory-card[data-entry-id="${id}"]`);

async function writeThroughForm(page: Page, content: string, tags = ""): Promise<void> {
  await page.getByRole("button", { name: "New entry" }).click();
  await page.getByLabel("Content").fill(content);
  if (tags) await page.getByLabel("Tags (comma-separated)").fill(tags);
  await page.getByRole("button", { name: "Save", exact: true }).click();
  await page.locator("[data-verdict]").waitFor();
}

describeInBrowser("Memory tab", () => {
  const it = test.extend("builder", ({ server }) => server.agent("builder"));
  it.override("serverEnv", { UI_PASSWORD: PASSWORD });

  it("writes an entry, says it is new and names the similar entries the team already has", async ({ server, builder, browser }) => {
    const opened = await openPage(browser);
    const page = await signIn(server, opened);
    const existing = await server.request<Entry>("/memory", {
      as: builder,
      body: { content: "The nightly backup job copies the database to the object store at 03:00 UTC", project: null },
    });
    expect(existing.status).toBe(201);

    await writeThroughForm(page, "The nightly backup job copies the database to the object store at 03:00 UTC, then verifies it", "backup");
    const verdict = page.locator("[data-verdict]");
    expect(await verdict.getAttribute("data-verdict")).toBe("new");
    expect(await verdict.textContent()).toContain("Saved as a new entry");
    expect(await verdict.locator(".similar-list").textContent()).toContain("builder");
    await page.getByRole("button", { name: "Done" }).click();

    const written = page.locator(".memory-card", { hasText: "then verifies it" });
    await written.locator(".tag").first().waitFor();
    expect(await written.locator(".tag").allTextContents()).toEqual(["backup"]);
    expect(unexpected(opened.errors)).toEqual([]);
    await opened.context.close();
  });

  it("says a secret in what was written was replaced, and shows the entry without it", async ({ server, browser }) => {
    const opened = await openPage(browser);
    const page = await signIn(server, opened);
    const password = "Tr0ub4dor-and-3-horses";
    await writeThroughForm(page, `The staging database is postgres://app:${password}@db.staging.internal:5432/app`);
    const notice = page.locator("[data-verdict] .verdict-redacted");
    expect(await notice.getAttribute("data-redactions")).toBe("1");
    expect(await notice.textContent()).toContain("One secret (a key, a token or a password) was replaced by [REDACTED:…] before it was stored");
    await page.getByRole("button", { name: "Done" }).click();
    const written = page.locator(".memory-card", { hasText: "staging database" });
    await written.waitFor();
    expect(await written.textContent()).toContain("postgres://app:[REDACTED:url_password]@db.staging.internal");
    expect(await page.content()).not.toContain(password);
    expect(unexpected(opened.errors)).toEqual([]);
    await opened.context.close();
  });

  it("shows a doc's Markdown as headings, lists and emphasis, and its markup as text", async ({ server, builder, browser }) => {
    const content = [
      "# Checkout synthesis",
      "Coupons are **rounded once**, at the end; see [the runbook](https://runbooks.example/coupons).",
      "",
      "### Recommended Actions",
      "- retry failed webhooks with `backoff`",
      "- cap retries at *five*",
      "",
      '<img src=x onerror="document.title=\'pwned\'"> and [a script link](javascript:alert(1))',
    ].join("\n");
    const doc = await server.request<Entry>("/memory", { as: server.owner, body: { content, type: "doc", project: null } });
    expect(doc.status).toBe(201);
    const opened = await openPage(browser);
    const page = await signIn(server, opened);
    const shown = card(page, doc.body.id).locator(".card-content");
    await shown.waitFor();
    expect(await shown.locator("h3").textContent()).toBe("Checkout synthesis");
    expect(await shown.locator("h5").textContent()).toBe("Recommended Actions");
    expect(await shown.locator("li").allTextContents()).toEqual(["retry failed webhooks with backoff", "cap retries at five"]);
    expect(await shown.locator("li code").textContent()).toBe("backoff");
    expect(await shown.locator("strong").textContent()).toBe("rounded once");
    expect(await shown.locator("a").count()).toBe(1);
    expect(await shown.locator("a").getAttribute("href")).toBe("https://runbooks.example/coupons");
    // Markup in a note is text: no element is made of it, no handler runs, no javascript: link exists.
    expect(await shown.locator("img").count()).toBe(0);
    expect(await shown.textContent()).toContain('<img src=x onerror="document.title=\'pwned\'">');
    expect(await page.title()).not.toBe("pwned");
    // Other entries stay plain text.
    const note = await server.request<Entry>("/memory", { as: builder, body: { content: "a **plain** note", project: null } });
    await page.reload();
    await card(page, note.body.id).waitFor();
    expect(await card(page, note.body.id).locator(".card-content strong").count()).toBe(0);
    expect(unexpected(opened.errors)).toEqual([]);
    await opened.context.close();
  });

  it("shows that a repeated write duplicates an existing entry, which was reinforced instead", async ({ server, builder, browser }) => {
    const opened = await openPage(browser);
    const page = await signIn(server, opened);
    const original = await server.request<Entry>("/memory", { as: builder, body: { content: "Feature flags live in config/flags.yaml", project: null } });

    await writeThroughForm(page, "Feature flags live in config/flags.yaml");
    const verdict = page.locator("[data-verdict]");
    expect(await verdict.getAttribute("data-verdict")).toBe("duplicate");
    const text = (await verdict.textContent()) ?? "";
    expect(text).toContain("Duplicate");
    expect(text).toContain(original.body.id.slice(0, 8));
    expect(text).toContain("reinforced");
    expect(await page.getByRole("button", { name: "Save it as a new entry anyway" }).count()).toBe(1);
    await opened.context.close();
  });

  it("finds an entry by search and shows its score, similarity and kind of match", async ({ server, builder, browser }) => {
    const opened = await openPage(browser);
    const page = await signIn(server, opened);
    const entry = await server.request<Entry>("/memory", { as: builder, body: { content: "Invoices are rendered with wkhtmltopdf inside the billing worker", project: null } });

    await page.getByLabel("Search memory (meaning and keywords)").fill("wkhtmltopdf invoices");
    await page.getByRole("button", { name: "Search", exact: true }).click();
    const hit = card(page, entry.body.id);
    await hit.waitFor();
    const scores = (await hit.locator(".scores").textContent()) ?? "";
    expect(scores).toMatch(/score \d\.\d{4}/);
    expect(scores).toMatch(/similarity (\d\.\d{3}|—)/);
    expect(scores).toMatch(/match (semantic|keyword|both)/);
    expect(await page.locator(".result-summary").textContent()).toContain("wkhtmltopdf invoices");

    await page.getByRole("button", { name: "Back to the list" }).click();
    await page.locator(".memory-card .scores").waitFor({ state: "detached" });
    await opened.context.close();
  });

  it("edits an entry and shows its new version", async ({ server, browser }) => {
    const opened = await openPage(browser);
    const page = await signIn(server, opened);
    const entry = await server.request<Entry>("/memory", { as: server.owner, body: { content: "Release trains leave every Tuesday", project: null } });

    await card(page, entry.body.id).getByRole("button", { name: "Edit" }).click();
    await page.getByLabel("Content").fill("Release trains leave every Tuesday and Thursday");
    await page.getByRole("button", { name: /^Save/ }).click();
    await card(page, entry.body.id).filter({ hasText: "Tuesday and Thursday" }).waitFor();
    expect(await card(page, entry.body.id).locator(".card-meta").textContent()).toContain("v2");

    const stored = await server.request<Entry>(`/memory/${entry.body.id}`, { as: server.owner });
    expect(stored.body).toMatchObject({ content: "Release trains leave every Tuesday and Thursday", version: 2 });
    await opened.context.close();
  });

  it("on a version conflict shows the current version and, on retry, applies only the user's changes to it", async ({ server, browser }) => {
    const opened = await openPage(browser);
    const page = await signIn(server, opened);
    const entry = await server.request<Entry>("/memory", { as: server.owner, body: { content: "Staging deploys need a green build", tags: ["deploy"], project: null } });

    await card(page, entry.body.id).getByRole("button", { name: "Edit" }).click();
    await page.getByLabel("Content").fill("Staging deploys need a green build and a changelog entry");
    // Someone else changes the tags while the form is open.
    const concurrent = await server.request<Entry>(`/memory/${entry.body.id}`, { as: server.owner, method: "PATCH", body: { tags: ["deploy", "staging"] } });
    expect(concurrent.body.version).toBe(2);
    await page.getByRole("button", { name: /^Save/ }).click();

    const conflict = page.locator(".conflict");
    await conflict.waitFor();
    expect(await conflict.textContent()).toContain("version 2");
    expect(await conflict.locator(".conflict-current").textContent()).toContain("staging");
    await page.getByRole("button", { name: "Apply my changes to version 2" }).click();
    await conflict.waitFor({ state: "detached" });
    // The panel closes as the retry is sent: the saved entry is what the card shows once it answers.
    await card(page, entry.body.id).filter({ hasText: "changelog entry" }).waitFor();

    const stored = await server.request<Entry>(`/memory/${entry.body.id}`, { as: server.owner });
    expect(stored.body).toMatchObject({ content: "Staging deploys need a green build and a changelog entry", tags: ["deploy", "staging"], version: 3 });
    expect(unexpected(opened.errors, [/status of 412/])).toEqual([]);
    await opened.context.close();
  });

  it("deletes an entry after asking", async ({ server, browser }) => {
    const opened = await openPage(browser);
    const page = await signIn(server, opened);
    const entry = await server.request<Entry>("/memory", { as: server.owner, body: { content: "A short-lived note to delete", project: null } });

    await card(page, entry.body.id).getByRole("button", { name: "Delete" }).click();
    const dialog = page.getByRole("dialog", { name: "Delete this entry?" });
    expect(await dialog.textContent()).toContain("A short-lived note to delete");
    await dialog.getByRole("button", { name: "Delete", exact: true }).click();
    await card(page, entry.body.id).waitFor({ state: "detached" });
    expect((await server.request(`/memory/${entry.body.id}`, { as: server.owner })).status).toBe(404);
    await opened.context.close();
  });

  it("shows an entry's parents and read counts in its detail, without counting the look as a read", async ({ server, builder, browser }) => {
    const opened = await openPage(browser);
    const page = await signIn(server, opened);
    const parent = await server.request<Entry>("/memory", { as: builder, body: { content: "Parent entry: the queue is RabbitMQ", project: null } });
    const child = await server.request<Entry>("/memory", {
      as: builder,
      body: { content: "Child entry: consumers ack after the write commits", parents: [parent.body.id], project: null },
    });
    await server.request(`/memory/${child.body.id}`, { as: server.owner });

    await card(page, child.body.id).getByRole("button", { name: "Details" }).click();
    const dialog = page.getByRole("dialog");
    await dialog.locator(".detail").waitFor();
    expect(await dialog.textContent()).toContain("1 by 1 distinct reader");
    await dialog.getByRole("button", { name: parent.body.id.slice(0, 8) }).click();
    await dialog.getByText("Parent entry: the queue is RabbitMQ").waitFor();
    await dialog.getByRole("button", { name: /Back to/ }).click();
    await dialog.getByText("Child entry").waitFor();

    const after = await server.request<{ node: { read_count: number } }>(`/graph/${child.body.id}`, { as: builder });
    expect(after.body.node.read_count).toBe(1);
    await opened.context.close();
  });

  it("leads from a merged-away parent to the entry it was merged into", async ({ server, builder, browser }) => {
    const reviewer = await server.agent("merge-reviewer");
    const a = await server.request<Entry>("/memory", { as: builder, body: { content: "Sessions expire after 30 minutes idle", project: null, allow_duplicate: true } });
    const b = await server.request<Entry>("/memory", { as: reviewer, body: { content: "Sessions expire after half an hour idle", project: null, allow_duplicate: true } });
    const merged = await server.request<{ entry: Entry }>("/archivist/merge", {
      as: server.archivist,
      body: { sources: [{ id: a.body.id, version: 1 }, { id: b.body.id, version: 1 }], content: "Sessions expire after 30 minutes without a request." },
    });
    expect(merged.status).toBe(201);
    const opened = await openPage(browser);
    const page = await signIn(server, opened);
    await card(page, merged.body.entry.id).getByRole("button", { name: "Details" }).click();
    const dialog = page.getByRole("dialog");
    await dialog.getByRole("button", { name: a.body.id.slice(0, 8) }).click();
    await dialog.getByText("This entry was merged into").waitFor();
    await dialog.getByRole("button", { name: merged.body.entry.id.slice(0, 8), exact: true }).click();
    await dialog.getByText("Sessions expire after 30 minutes without a request.").waitFor();
    // The only console errors are the two 404s of looking up the merged-away entry.
    expect(unexpected(opened.errors, [/status of 404/])).toEqual([]);
    await opened.context.close();
  });

  it("shows the API's error detail when a write is refused", async ({ server, browser }) => {
    const opened = await openPage(browser);
    const page = await signIn(server, opened);
    await page.getByRole("button", { name: "New entry" }).click();
    await page.getByLabel("Content").fill("x".repeat(70_000));
    await page.getByRole("button", { name: "Save", exact: true }).click();
    const alert = page.getByRole("dialog").getByRole("alert");
    await alert.waitFor();
    expect((await alert.textContent())?.length).toBeGreaterThan(5);
    expect(await alert.textContent()).not.toContain("[object");
    await opened.context.close();
  });
});
