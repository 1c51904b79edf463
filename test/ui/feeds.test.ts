import type { Locator, Page } from "playwright-core";
import { afterEach, beforeEach, expect } from "vitest";
import type { Feed } from "../../src/wire/feeds.js";
import type { MemoryEntry as Entry } from "../../src/wire/memory.js";
import { describeInBrowser, openPage, screenshot, type OpenPage } from "../helpers/browser.js";
import { startFeedServer, type FeedServer } from "../helpers/feed-server.js";
import { fixtureDocument, renderFeed, type FixtureFeed } from "../helpers/feed-fixtures.js";
import type { Credentials, TestServer } from "../helpers/server.js";
import { test, signIn as signInAs, styleOf } from "../helpers/ui.js";

// CONTRACT §15 in the web UI: the Feeds tab (subscribing, the list with each feed's health, polling
// now, pausing, editing, unsubscribing), a feed's entries marked in the Memory tab, and the addresses
// under which memory can be followed as a feed. A real feed server on loopback serves the documents.

const PASSWORD = "feeds tab password";

/** The link of the feed item an entry came from. */
const itemLink = (entry: Entry): string | null | undefined => (entry.source?.kind === "feed" ? entry.source.url : undefined);

let feeds: FeedServer;
beforeEach(async () => {
  feeds = await startFeedServer();
});
afterEach(() => feeds.close());

/** Serves an RSS 2.0 fixture of `count` items named `name` at `path` (the newest `count` of a growing feed). */
function serve(path: string, count: number, name: string): void {
  const document = fixtureDocument("rss-2.0", count, { name });
  feeds.route(path, { headers: { "content-type": document.contentType }, body: document.body });
}

/** Serves a feed of hand-written items, for pictures that read like a real team's. */
function serveFeed(path: string, feed: FixtureFeed): void {
  const { body, contentType } = renderFeed("rss-2.0", feed);
  feeds.route(path, { headers: { "content-type": contentType }, body });
}

async function project(server: TestServer, name: string): Promise<void> {
  const created = await server.request("/projects", { as: server.owner, body: { name } });
  expect(created.status, created.text).toBe(201);
}

async function subscribed(server: TestServer, body: Record<string, unknown>, as: Credentials = server.owner): Promise<Feed> {
  const response = await server.request<Feed>("/feeds", { as, body: { project: "payments", ...body } });
  expect(response.status, response.text).toBe(201);
  return response.body;
}

const signIn = (server: TestServer, opened: OpenPage, tab: string): Promise<Page> => signInAs(opened.page, server.url, PASSWORD, tab, '.live-status:has-text("Live")');

const feedCard = (page: Page, id: string): Locator => page.locator(`.feed-card[data-feed-id="${id}"]`);
const cardNamed = (page: Page, name: string): Locator => page.locator(".feed-card", { has: page.getByRole("heading", { name, exact: true }) });
const text = async (locator: Locator): Promise<string> => ((await locator.textContent()) ?? "").trim();

/** Console errors but the 401 before signing in and the refusals a test provokes on purpose. */
const unexpected = (errors: string[], expected: number[] = []) =>
  errors.filter((error) => !/status of 401/.test(error) && !expected.some((status) => error.includes(`status of ${status}`)));

function assertOnlyOwnOrigin(server: TestServer, opened: OpenPage): void {
  const origin = new URL(server.url).origin;
  expect(opened.requests.filter((url) => !url.startsWith(`${origin}/`) && !url.startsWith("data:"))).toEqual([]);
}

describeInBrowser("Feeds tab", () => {
  test.override("serverEnv", { UI_PASSWORD: PASSWORD, FEEDS_ALLOW_PRIVATE: "true", FEEDS_POLL_SECONDS: "1" });

  test("explains what feeds are for while there are none", async ({ server, browser }) => {
    const opened = await openPage(browser);
    const page = await signIn(server, opened, "feeds");
    const empty = page.locator(".feed-list-section .empty");
    await empty.waitFor();
    expect(await empty.textContent()).toContain("each new item becomes a memory entry in the project");
    expect(await page.getByRole("heading", { level: 1 }).textContent()).toBe("Feeds");
    expect(unexpected(opened.errors)).toEqual([]);
    await opened.context.close();
  });

  test("subscribes through the form, lists the feed with what it ingested, and polls new items on request", async ({ server, browser }) => {
    await project(server, "payments");
    serve("/releases.xml", 5, "releases");
    const opened = await openPage(browser);
    const page = await signIn(server, opened, "feeds");

    await page.getByRole("button", { name: "Subscribe to a feed" }).click();
    const dialog = page.getByRole("dialog", { name: "Subscribe to a feed" });
    await dialog.getByLabel("Feed URL").fill(`${feeds.url}/releases.xml`);
    await dialog.getByLabel("Project").selectOption("payments");
    await dialog.getByLabel(/^Tags for its entries/).fill("release-notes, payments-api");
    await dialog.getByLabel(/^New items per poll/).fill("3");
    await dialog.getByLabel(/^Confidence of its entries/).fill("0.6");
    expect(await dialog.getByLabel(/^Check the feed now/).isChecked()).toBe(true);
    await dialog.getByRole("button", { name: "Subscribe", exact: true }).click();
    await dialog.waitFor({ state: "detached" });
    await page.getByText("Subscribed to “The releases feed”: 3 items ingested.").waitFor();

    const card = cardNamed(page, "The releases feed");
    await card.waitFor();
    expect(await text(card.locator(".pill"))).toBe("ok");
    expect(await card.getAttribute("data-status")).toBe("ok");
    expect(await text(card.locator(".feed-ingested"))).toBe("3");
    expect(await text(card.locator(".feed-project"))).toBe("payments");
    expect(await card.locator(".feed-url a").getAttribute("href")).toBe(`${feeds.url}/releases.xml`);
    expect(await card.locator(".feed-url a").getAttribute("rel")).toBe("noopener noreferrer");
    expect(await card.locator(".tag").allTextContents()).toEqual(["release-notes", "payments-api"]);
    expect(await text(card.locator(".feed-settings"))).toBe("every hour, up to 3 items");
    expect(await card.locator(".feed-error").count()).toBe(0);
    const [feed] = (await server.request<Feed[]>("/feeds?project=payments", { as: server.owner })).body;
    expect(feed).toMatchObject({ name: "The releases feed", items_ingested: 3, tags: ["release-notes", "payments-api"] });
    // Relative times (past and future), the exact one on hover.
    const polled = card.locator(".feed-last-polled time");
    expect(await polled.getAttribute("datetime")).toBe(feed?.last_polled_at);
    expect(await polled.textContent()).toMatch(/ago$|^just now$/);
    expect(await polled.getAttribute("title")).toBeTruthy();
    const next = card.locator(".feed-next-poll time");
    expect(await next.getAttribute("datetime")).toBe(feed?.next_poll_at);
    expect(await next.textContent()).toMatch(/^in /);
    const entries = await server.request<Entry[]>("/memory?source_kind=feed&project=payments", { as: server.owner });
    expect(entries.body).toHaveLength(3);

    // The feed grows by two items: Poll now brings them, and says so on the card.
    serve("/releases.xml", 7, "releases");
    await card.getByRole("button", { name: "Poll now" }).click();
    await expect.poll(() => text(card.locator(".feed-poll-result"))).toBe("2 new items");
    await expect.poll(() => text(card.locator(".feed-ingested"))).toBe("5");
    await card.getByRole("button", { name: "Poll now" }).click();
    await expect.poll(() => text(card.locator(".feed-poll-result"))).toBe("nothing new");
    expect(await text(card.locator(".feed-ingested"))).toBe("5");

    assertOnlyOwnOrigin(server, opened);
    expect(unexpected(opened.errors)).toEqual([]);
    await opened.context.close();
  });

  test("pauses, resumes, edits and unsubscribes, saying the entries stay", async ({ server, browser }) => {
    await project(server, "payments");
    serve("/changelog.xml", 2, "changelog");
    const feed = await subscribed(server, { url: `${feeds.url}/changelog.xml`, tags: ["changelog"] });
    const opened = await openPage(browser);
    const page = await signIn(server, opened, "feeds");
    const card = feedCard(page, feed.id);
    await card.waitFor();

    await card.getByRole("button", { name: "Pause" }).click();
    await expect.poll(() => card.getAttribute("data-status")).toBe("paused");
    expect(await text(card.locator(".pill"))).toBe("paused");
    expect(await text(card.locator(".feed-next-poll"))).toBe("paused");
    expect((await server.request<Feed>(`/feeds/${feed.id}`, { as: server.owner })).body.paused).toBe(true);
    await card.getByRole("button", { name: "Resume" }).click();
    await expect.poll(() => card.getAttribute("data-status")).toBe("ok");
    expect(await card.getByRole("button", { name: "Pause" }).count()).toBe(1);

    await card.getByRole("button", { name: "Edit" }).click();
    const dialog = page.getByRole("dialog", { name: "Edit “The changelog feed”" });
    expect(await dialog.getByLabel("Name", { exact: true }).inputValue()).toBe("The changelog feed");
    expect(await dialog.getByLabel(/^Tags for its entries/).inputValue()).toBe("changelog");
    expect(await dialog.getByLabel(/^Poll every/).inputValue()).toBe("60");
    await dialog.getByLabel("Name", { exact: true }).fill("Gateway changelog");
    await dialog.getByLabel(/^Tags for its entries/).fill("changelog, gateway");
    await dialog.getByLabel(/^Poll every/).fill("240");
    await dialog.getByRole("button", { name: "Save" }).click();
    await dialog.waitFor({ state: "detached" });
    await expect.poll(() => text(card.getByRole("heading"))).toBe("Gateway changelog");
    expect(await text(card.locator(".feed-settings"))).toBe("every 4 h, up to 20 items");
    expect(await card.locator(".tag").allTextContents()).toEqual(["changelog", "gateway"]);
    expect((await server.request<Feed>(`/feeds/${feed.id}`, { as: server.owner })).body).toMatchObject({ name: "Gateway changelog", interval_minutes: 240, tags: ["changelog", "gateway"] });

    await card.getByRole("button", { name: "Delete" }).click();
    const confirm = page.getByRole("dialog", { name: "Unsubscribe from “Gateway changelog”?" });
    expect(await confirm.textContent()).toContain("The 2 entries it brought stay in memory");
    await confirm.getByRole("button", { name: "Unsubscribe" }).click();
    await confirm.waitFor({ state: "detached" });
    await card.waitFor({ state: "detached" });
    expect((await server.request(`/feeds/${feed.id}`, { as: server.owner })).status).toBe(404);
    expect((await server.request<Entry[]>("/memory?source_kind=feed&project=payments", { as: server.owner })).body).toHaveLength(2);
    await page.locator(".feed-list-section .empty").waitFor();
    expect(unexpected(opened.errors)).toEqual([]);
    await opened.context.close();
  });

  test("shows a failing feed's status and last error, and a failed poll where it was asked for", async ({ server, browser }) => {
    await project(server, "payments");
    serve("/healthy.xml", 1, "healthy");
    let failing = false;
    const flaky = fixtureDocument("rss-2.0", 1, { name: "status" });
    feeds.route("/status.xml", (response) => {
      if (failing) response.writeHead(500, { "content-type": "text/plain" }).end("down");
      else response.writeHead(200, { "content-type": flaky.contentType }).end(flaky.body);
    });
    const healthy = await subscribed(server, { url: `${feeds.url}/healthy.xml` });
    const feed = await subscribed(server, { url: `${feeds.url}/status.xml`, interval_minutes: 15 });
    const opened = await openPage(browser);
    const page = await signIn(server, opened, "feeds");
    const card = feedCard(page, feed.id);
    await card.waitFor();
    expect(await card.getAttribute("data-status")).toBe("ok");

    // Two failed polls elsewhere: the card follows them live, still ok but with its last error.
    failing = true;
    for (let attempt = 0; attempt < 2; attempt++) expect((await server.request(`/feeds/${feed.id}/poll`, { as: server.owner, method: "POST" })).status).toBe(502);
    await expect.poll(() => text(card.locator(".feed-error-text")), { timeout: 10_000 }).toBe("the feed answered HTTP 500");
    expect(await card.getAttribute("data-status")).toBe("ok");

    // The third, asked for here, turns it failing.
    await card.getByRole("button", { name: "Poll now" }).click();
    await expect.poll(() => text(card.locator(".feed-poll-result"))).toMatch(/^Poll failed: feed .*\/status\.xml failed: .*HTTP 500/);
    await expect.poll(() => card.getAttribute("data-status")).toBe("failing");
    expect(await text(card.locator(".pill"))).toBe("failing");
    expect(await text(card.locator(".feed-error"))).toBe("Last error (failing): the feed answered HTTP 500");
    expect(await card.getAttribute("class")).toContain("is-failing");
    // Visibly unlike a healthy one, not only in words.
    const healthyCard = feedCard(page, healthy.id);
    expect(await styleOf(card, "borderLeftColor")).not.toBe(await styleOf(healthyCard, "borderLeftColor"));
    expect(await styleOf(card.locator(".pill"), "backgroundColor")).not.toBe(await styleOf(healthyCard.locator(".pill"), "backgroundColor"));

    // It heals on the next poll that works.
    failing = false;
    await card.getByRole("button", { name: "Poll now" }).click();
    await expect.poll(() => card.getAttribute("data-status")).toBe("ok");
    expect(await card.locator(".feed-error").count()).toBe(0);
    expect(unexpected(opened.errors, [502])).toEqual([]);
    await opened.context.close();
  });

  test("shows the server's refusals in the form: not a feed, already subscribed, a feed that does not answer", async ({ server, browser }) => {
    await project(server, "payments");
    serve("/known.xml", 1, "known");
    feeds.route("/page.html", { headers: { "content-type": "text/html" }, body: "<!doctype html><html><head><title>Blog</title></head><body><h1>Welcome</h1></body></html>" });
    feeds.route("/down.xml", { status: 500, body: "down" });
    const known = await subscribed(server, { url: `${feeds.url}/known.xml` });
    const opened = await openPage(browser);
    const page = await signIn(server, opened, "feeds");
    await feedCard(page, known.id).waitFor();

    await page.getByRole("button", { name: "Subscribe to a feed" }).click();
    const dialog = page.getByRole("dialog", { name: "Subscribe to a feed" });
    const submit = dialog.getByRole("button", { name: "Subscribe", exact: true });
    const alert = dialog.getByRole("alert");
    await dialog.getByLabel("Project").selectOption("payments");

    // 422: the address answers, but not with a feed.
    await dialog.getByLabel("Feed URL").fill(`${feeds.url}/page.html`);
    await submit.click();
    await alert.waitFor();
    expect(await alert.getAttribute("data-status")).toBe("422");
    expect(await text(alert.locator(".error-text"))).toMatch(/^not a feed: \S/);
    expect(await alert.textContent()).toContain("not with RSS, Atom or JSON Feed");

    // 409: already followed in that project; the answer leads to it.
    await dialog.getByLabel("Feed URL").fill(`${feeds.url}/known.xml`);
    await submit.click();
    await expect.poll(() => alert.getAttribute("data-status")).toBe("409");
    expect(await text(alert.locator(".error-text"))).toBe("Already subscribed: this URL is followed in that project.");

    // 502: the feed did not answer; subscribing without the check still works, and the list shows how the first poll went.
    await dialog.getByLabel("Feed URL").fill(`${feeds.url}/down.xml`);
    await submit.click();
    await expect.poll(() => alert.getAttribute("data-status")).toBe("502");
    expect(await text(alert.locator(".error-text"))).toMatch(/^feed .*\/down\.xml failed: .*HTTP 500/);
    expect(await alert.textContent()).toContain("untick “Check the feed now” to subscribe anyway");
    expect((await server.request<Feed[]>("/feeds", { as: server.owner })).body).toHaveLength(1);
    await dialog.getByLabel(/^Check the feed now/).uncheck();
    await submit.click();
    await dialog.waitFor({ state: "detached" });
    await page.getByText("its first poll runs within a minute").waitFor();
    const unchecked = page.locator(".feed-card", { hasText: "/down.xml" });
    await expect.poll(() => text(unchecked.locator(".feed-error-text")), { timeout: 15_000 }).toBe("the feed answered HTTP 500");

    // Back to the 409: "Show the subscription" points at the one that exists.
    await page.getByRole("button", { name: "Subscribe to a feed" }).click();
    await dialog.getByLabel("Project").selectOption("payments");
    await dialog.getByLabel("Feed URL").fill(`${feeds.url}/known.xml`);
    await submit.click();
    await dialog.getByRole("button", { name: "Show the subscription" }).click();
    await dialog.waitFor({ state: "detached" });
    await expect.poll(() => feedCard(page, known.id).getAttribute("class")).toContain("is-target");
    expect(new URL(page.url()).hash).toBe(`#/feeds/${known.id}`);
    expect(unexpected(opened.errors, [409, 422, 502])).toEqual([]);
    await opened.context.close();
  });

  test("marks a feed's entries in the Memory tab with the feed and the item, and filters by source", async ({ server, browser }) => {
    await project(server, "payments");
    serve("/notes.xml", 2, "notes");
    const feed = await subscribed(server, { url: `${feeds.url}/notes.xml` });
    const written = await server.request<{ id: string }>("/memory", { as: server.owner, body: { content: "Refunds go through the same queue as payments.", project: "payments" } });
    expect(written.status, written.text).toBe(201);
    const entries = (await server.request<Entry[]>("/memory?source_kind=feed&project=payments", { as: server.owner })).body;
    const newest = entries.find((entry) => itemLink(entry)?.endsWith("/items/2")) as Entry;

    const opened = await openPage(browser);
    const page = await signIn(server, opened, "memory");
    const card = page.locator(`.memory-card[data-entry-id="${newest.id}"]`);
    const mark = card.locator(".feed-mark");
    await expect.poll(() => text(mark), { timeout: 10_000 }).toBe("from feed The notes feed · read it on feeds.example.test (opens in a new tab)");
    const item = mark.getByRole("link", { name: "read it on feeds.example.test (opens in a new tab)" });
    expect(await item.getAttribute("href")).toBe("https://feeds.example.test/notes/items/2");
    expect(await item.getAttribute("rel")).toBe("noopener noreferrer");
    expect(await item.getAttribute("target")).toBe("_blank");
    expect(await mark.getByRole("link", { name: "The notes feed" }).getAttribute("href")).toBe(`#/feeds/${feed.id}`);
    expect(await card.locator(".tag").allTextContents()).toEqual(expect.arrayContaining(["feed-item", "unprocessed"]));
    // Its content is written as Markdown: the item's title is a heading.
    expect(await text(card.locator(".card-content h4"))).toBe("Item 2 of notes");
    expect(await card.locator(".card-content").textContent()).toContain("Source: https://feeds.example.test/notes/items/2");
    const plain = page.locator(`.memory-card[data-entry-id="${written.body.id}"]`);
    await plain.waitFor();
    expect(await plain.locator(".feed-mark").count()).toBe(0);

    // "from feeds" leaves the rest out.
    await page.locator(".filters").getByLabel("Source").selectOption({ label: "from feeds" });
    await plain.waitFor({ state: "detached" });
    await expect.poll(() => page.locator(".memory-card").count()).toBe(2);
    expect(await page.locator('.memory-card[data-source="feed"]').count()).toBe(2);

    // The details say the same.
    await card.getByRole("button", { name: "Details" }).click();
    const detail = page.getByRole("dialog", { name: `Entry ${newest.id.slice(0, 8)}` });
    await expect.poll(() => text(detail.locator(".feed-mark .feed-mark-name"))).toBe("The notes feed");
    await page.keyboard.press("Escape");
    await detail.waitFor({ state: "detached" });

    // The feed's name leads to its subscription in the Feeds tab.
    await mark.getByRole("link", { name: "The notes feed" }).click();
    await page.locator('nav.tabs a[href="#/feeds"][aria-current="page"]').waitFor();
    await expect.poll(() => feedCard(page, feed.id).getAttribute("class")).toContain("is-target");
    assertOnlyOwnOrigin(server, opened);
    expect(unexpected(opened.errors)).toEqual([]);
    await opened.context.close();
  });

  test("shows where to follow memory as a feed, for the project chosen, with placeholders instead of a key", async ({ server, browser }) => {
    await project(server, "payments");
    const opened = await openPage(browser);
    await opened.context.grantPermissions(["clipboard-read", "clipboard-write"], { origin: server.url });
    const page = await signIn(server, opened, "feeds");
    const origin = new URL(server.url).origin;
    const box = page.getByRole("region", { name: "Follow this memory" });
    const address = box.getByLabel("Feed address");
    const withCredentials = box.getByLabel("Address with credentials in the query");

    expect(await address.inputValue()).toBe(`${origin}/memory/feed.atom`);
    expect(await withCredentials.inputValue()).toBe(`${origin}/memory/feed.atom?agent_id=AGENT_ID&api_key=API_KEY`);
    await page.locator(".filters").getByLabel("Project").selectOption("payments");
    await expect.poll(() => address.inputValue()).toBe(`${origin}/memory/feed.atom?project=payments`);
    expect(await withCredentials.inputValue()).toBe(`${origin}/memory/feed.atom?project=payments&agent_id=AGENT_ID&api_key=API_KEY`);
    expect(await box.textContent()).toContain("the entries of payments");
    await box.getByRole("button", { name: "JSON Feed" }).click();
    expect(await box.getByRole("button", { name: "JSON Feed" }).getAttribute("aria-pressed")).toBe("true");
    await expect.poll(() => address.inputValue()).toBe(`${origin}/memory/feed.json?project=payments`);
    expect(await withCredentials.inputValue()).toBe(`${origin}/memory/feed.json?project=payments&agent_id=AGENT_ID&api_key=API_KEY`);
    await page.locator(".filters").getByLabel("Project").selectOption({ label: "global (no project)" });
    await expect.poll(() => address.inputValue()).toBe(`${origin}/memory/feed.json?project=`);
    expect(await box.textContent()).toContain("viewer");

    await box.getByRole("button", { name: "Copy address", exact: true }).click();
    await box.getByRole("button", { name: "Copied" }).waitFor();
    expect(await page.evaluate<string>("navigator.clipboard.readText()")).toBe(`${origin}/memory/feed.json?project=`);

    // The Memory tab offers the same for its filters.
    await page.locator('nav.tabs a[href="#/memory"]').click();
    await page.getByText("Follow these entries as a feed").click();
    const memoryAddress = page.locator(".follow-details").getByLabel("Feed address");
    expect(await memoryAddress.inputValue()).toBe(`${origin}/memory/feed.atom`);
    await page.locator(".filters").getByLabel("Project").selectOption("payments");
    await page.locator(".filters").getByLabel("Tag", { exact: true }).fill("release-notes");
    await page.locator(".filters").getByLabel("Source").selectOption({ label: "from feeds" });
    await page.locator(".filters").getByLabel("Type").selectOption("memory");
    await expect.poll(() => memoryAddress.inputValue()).toBe(`${origin}/memory/feed.atom?type=memory&project=payments&tag=release-notes&source_kind=feed`);

    // No credential of the signed-in owner is anywhere on the page.
    const html = await page.content();
    expect(html).not.toContain(server.owner.apiKey);
    expect(html).not.toContain("cairn_");
    await opened.context.close();
  });
});

describeInBrowser("Feeds pictures", () => {
  test.override("serverEnv", { UI_PASSWORD: PASSWORD, FEEDS_ALLOW_PRIVATE: "true", FEEDS_POLL_SECONDS: "1" });

  test("captures the Feeds tab with a failing and a paused feed, and a feed's entry in memory, in light, dark and at 400 px", async ({ server, browser }) => {
    await project(server, "checkout");
    const published = (hoursAgo: number) => new Date(Date.now() - hoursAgo * 3_600_000);
    serveFeed("/postgres.xml", {
      name: "postgres",
      title: "PostgreSQL releases",
      link: "https://www.postgresql.org/",
      items: [
        { id: "pg-17-2", title: "PostgreSQL 17.2 released", link: "https://www.postgresql.org/about/news/17-2/", published: published(5), text: "", html: "<p>Fixes a regression in <b>logical replication</b> of partitioned tables, and 12 other bugs. Upgrade at your next maintenance window.</p>" },
        { id: "pg-17-1", title: "PostgreSQL 17.1 released", link: "https://www.postgresql.org/about/news/17-1/", published: published(30), text: "", html: "<p>Security release: CVE-2024-10976 in row security under subqueries.</p>" },
      ],
    });
    serveFeed("/stripe.xml", {
      name: "stripe",
      title: "Payment gateway API changelog",
      link: "https://gateway.example.com/changelog",
      items: [{ id: "gw-2026-03", title: "Idempotency keys now expire after 7 days", link: "https://gateway.example.com/changelog/idempotency-ttl", published: published(2), text: "", html: "<p>Requests repeating a key older than 7 days are treated as new.</p>" }],
    });
    serveFeed("/node.xml", {
      name: "node",
      title: "Node.js blog",
      link: "https://nodejs.org/en/blog",
      items: [{ id: "node-22-12", title: "Node v22.12.0 (LTS)", link: "https://nodejs.org/en/blog/release/v22.12.0", published: published(50), text: "", html: "<p>require(esm) is now enabled by default.</p>" }],
    });
    serveFeed("/status.xml", {
      name: "status",
      title: "Gateway status",
      link: "https://status.gateway.example.com/",
      items: [{ id: "incident-812", title: "Elevated card authorisation errors (resolved)", link: "https://status.gateway.example.com/incidents/812", published: published(20), text: "", html: "<p>Between 09:10 and 09:42 UTC about 4% of card authorisations failed with a timeout. Retries succeeded.</p>" }],
    });
    const postgres = await subscribed(server, { url: `${feeds.url}/postgres.xml`, project: "checkout", tags: ["postgres", "release-notes"], interval_minutes: 360 });
    await subscribed(server, { url: `${feeds.url}/stripe.xml`, project: "checkout", tags: ["gateway"], confidence: 0.6 });
    const node = await subscribed(server, { url: `${feeds.url}/node.xml`, project: null, tags: ["node"], interval_minutes: 1440 });
    const status = await subscribed(server, { url: `${feeds.url}/status.xml`, project: "checkout", name: "Gateway status page", tags: ["incident"], interval_minutes: 15 });
    await server.request(`/feeds/${node.id}`, { as: server.owner, method: "PATCH", body: { paused: true } });
    feeds.route("/status.xml", { status: 503, body: "maintenance" });
    for (let attempt = 0; attempt < 3; attempt++) await server.request(`/feeds/${status.id}/poll`, { as: server.owner, method: "POST" });
    expect((await server.request<Feed>(`/feeds/${status.id}`, { as: server.owner })).body.status).toBe("failing");
    const entry = (await server.request<Entry[]>("/memory?source_kind=feed&project=checkout&tag=postgres", { as: server.owner })).body.find((candidate) => itemLink(candidate)?.endsWith("/17-2/")) as Entry;

    const shots: [prefix: string, options: Parameters<typeof openPage>[1]][] = [
      ["", { viewport: { width: 1280, height: 1380 } }],
      ["dark-", { colorScheme: "dark", viewport: { width: 1280, height: 1280 } }],
      ["narrow-", { viewport: { width: 400, height: 800 } }],
    ];
    for (const [prefix, options] of shots) {
      const opened = await openPage(browser, options);
      const page = await signIn(server, opened, "feeds");
      const sideways = () => page.evaluate<number>("document.documentElement.scrollWidth - document.documentElement.clientWidth");
      await expect.poll(() => page.locator(".feed-card").count(), { timeout: 10_000 }).toBe(4);
      await page.locator('.feed-card[data-status="failing"]').waitFor();
      await page.mouse.move(0, 0);
      await page.waitForTimeout(300);
      await screenshot(page, `${prefix}feeds`);
      expect(await sideways(), `${prefix}feeds scrolls sideways`).toBeLessThanOrEqual(0);

      await page.getByRole("button", { name: "Subscribe to a feed" }).click();
      await page.getByRole("dialog").waitFor();
      expect(await sideways(), `${prefix}subscribe form scrolls sideways`).toBeLessThanOrEqual(0);
      if (prefix === "") await screenshot(page, "feeds-subscribe");
      await page.keyboard.press("Escape");
      await page.getByRole("dialog").waitFor({ state: "detached" });

      await page.goto(`${server.url}/ui/#/memory`);
      await page.locator(".filters").getByLabel("Source").selectOption({ label: "from feeds" });
      const card = page.locator(`.memory-card[data-entry-id="${entry.id}"]`);
      await card.locator(".feed-mark-name", { hasText: "PostgreSQL releases" }).waitFor({ timeout: 10_000 });
      // Changing tab focused its heading; the picture is of the page, not of the focus.
      await page.evaluate("document.activeElement?.blur()");
      await page.mouse.move(0, 0);
      await page.waitForTimeout(300);
      await screenshot(page, `${prefix}memory-feed-mark`);
      expect(await sideways(), `${prefix}memory-feed-mark scrolls sideways`).toBeLessThanOrEqual(0);
      expect(unexpected(opened.errors)).toEqual([]);
      await opened.context.close();
    }
    expect(postgres.items_ingested).toBe(2);
  });
});
