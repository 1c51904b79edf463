import { afterEach, beforeEach, describe, expect } from "vitest";
import type { Feed, FeedPollResult } from "../../src/wire/feeds.js";
import type { MemoryEntry } from "../../src/wire/memory.js";
import { withDatabase } from "../helpers/database.js";
import { startFeedServer, type FeedServer } from "../helpers/feed-server.js";
import { renderFeed, type FixtureItem } from "../helpers/feed-fixtures.js";
import { it } from "../helpers/fixtures.js";
import type { Credentials, ErrorBody, TestServer } from "../helpers/server.js";
import { eventually } from "../helpers/wait.js";

// CONTRACT §15 "Subscriptions": feeds polled into memory, on both backends.

let feeds: FeedServer;
beforeEach(async () => {
  feeds = await startFeedServer();
});
afterEach(() => feeds.close());

const RSS = { "content-type": "application/rss+xml; charset=utf-8" };

/** `count` items, newest first, an hour apart, the newest at noon on 1 March 2026. */
const items = (count: number, prefix = "Release"): FixtureItem[] =>
  Array.from({ length: count }, (_, index) => ({
    id: `${prefix.toLowerCase()}-${count - index}`,
    title: `${prefix} ${count - index}`,
    link: `https://example.com/${prefix.toLowerCase()}/${count - index}`,
    published: new Date(Date.UTC(2026, 2, 1, 12) - index * 3600_000),
    text: `Notes for ${prefix} ${count - index}.`,
    html: `<p>Notes for <b>${prefix} ${count - index}</b>.</p>`,
  }));

/** An RSS 2.0 document of `list`. */
const rssFeed = (title: string, list: FixtureItem[]): string => renderFeed("rss-2.0", { name: "test", title, link: "https://example.com/", items: list }).body;

async function member(server: TestServer, id: string, project = "payments"): Promise<Credentials> {
  const agent = await server.agent(id);
  const created = await server.request(`/projects`, { as: agent, body: { name: project } });
  if (created.status === 409) expect((await server.request(`/projects/${project}/join`, { as: agent, method: "POST" })).status).toBe(200);
  else expect(created.status, created.text).toBe(201);
  return agent;
}

const subscribe = (server: TestServer, as: Credentials, body: Record<string, unknown>, query = "") =>
  server.request<Feed & ErrorBody>(`/feeds${query}`, { as, body: { project: "payments", ...body } });

async function entriesOf(server: TestServer, as: Credentials, query = "source_kind=feed"): Promise<MemoryEntry[]> {
  const response = await server.request<MemoryEntry[]>(`/memory?project=payments&limit=200&${query}`, { as });
  expect(response.status, response.text).toBe(200);
  return response.body;
}

/** The guid of a feed item's entry (its source); undefined for any other entry. */
const guidOf = (entry: MemoryEntry): string | undefined => (entry.source?.kind === "feed" ? entry.source.guid : undefined);

describe("subscribing", () => {
  it.override("serverEnv", { FEEDS_ALLOW_PRIVATE: "true", FEEDS_POLL_SECONDS: "1" });

  it("fetches the feed once, takes only the newest items on the first poll, and makes them entries", async ({ server }) => {
    const alice = await member(server, "alice");
    feeds.route("/releases.xml", { headers: RSS, body: rssFeed("Payments API releases", items(30)) });
    const response = await subscribe(server, alice, { url: `${feeds.url}/releases.xml`, tags: ["payments-api"], max_items_per_poll: 5, confidence: 0.6 });
    expect(response.status, response.text).toBe(201);
    const feed = response.body;
    expect(feed).toMatchObject({ name: "Payments API releases", agent_id: "alice", project: "payments", status: "ok", items_ingested: 5, paused: false });
    expect(feed.last_success_at).not.toBeNull();
    expect(Date.parse(feed.next_poll_at) - Date.parse(feed.last_polled_at as string)).toBe(60 * 60_000);
    expect(feeds.requests("/releases.xml")).toHaveLength(1);

    const entries = await entriesOf(server, alice);
    expect(entries.map(guidOf).sort()).toEqual(["release-26", "release-27", "release-28", "release-29", "release-30"]);
    const newest = entries.find((entry) => guidOf(entry) === "release-30") as MemoryEntry;
    expect(newest).toMatchObject({ type: "memory", agent_id: "alice", project: "payments", confidence: 0.6 });
    expect(newest.tags.sort()).toEqual(["feed-item", "payments-api", "unprocessed"]);
    expect(newest.source).toEqual({ kind: "feed", feed_id: feed.id, url: "https://example.com/release/30", guid: "release-30" });
    expect(newest.content).toBe("## Release 30\n2026-03-01T12:00:00Z\n\nNotes for Release 30.\n\nSource: https://example.com/release/30");

    // The next poll takes what is new since, and nothing twice.
    feeds.route("/releases.xml", { headers: RSS, body: rssFeed("Payments API releases", items(33)) });
    const polled = await server.request<FeedPollResult>(`/feeds/${feed.id}/poll`, { as: alice, method: "POST" });
    expect(polled.status, polled.text).toBe(200);
    expect(polled.body).toEqual({ ingested: 3, not_modified: false, status: "ok" });
    expect((await entriesOf(server, alice)).length).toBe(8);
    expect((await server.request<Feed>(`/feeds/${feed.id}`, { as: alice })).body.items_ingested).toBe(8);
  });

  it("is searchable by source_kind", async ({ server }) => {
    const alice = await member(server, "alice");
    feeds.route("/status.xml", { headers: RSS, body: rssFeed("Status", [
      { id: "incident-1", title: "Card payments degraded", link: "https://status.example.com/1", published: new Date(), text: "", html: "Card authorisations were slow between 10:00 and 10:40." },
    ]) });
    expect((await subscribe(server, alice, { url: `${feeds.url}/status.xml` })).status).toBe(201);
    await server.request("/memory", { as: alice, body: { content: "Card payments go through the acquirer in Dublin.", project: "payments" } });
    const hits = await server.request<{ id: string; source?: { kind: string } | null }[]>("/memory/search?q=card+payments&project=payments&source_kind=feed", { as: alice });
    expect(hits.status, hits.text).toBe(200);
    expect(hits.body).toHaveLength(1);
    const all = await server.request<unknown[]>("/memory/search?q=card+payments&project=payments", { as: alice });
    expect(all.body).toHaveLength(2);
  });

  it("refuses the same URL twice in a project with the first one's id, but not in another project", async ({ server }) => {
    const alice = await member(server, "alice");
    await member(server, "alice2", "billing");
    feeds.route("/a.xml", { headers: RSS, body: rssFeed("A", items(2)) });
    const first = await subscribe(server, alice, { url: `${feeds.url}/a.xml` });
    const again = await subscribe(server, alice, { url: `${feeds.url}/a.xml#top` });
    expect(again.status).toBe(409);
    expect(again.body).toMatchObject({ code: "CONFLICT", detail: "already subscribed", id: first.body.id });
    const elsewhere = await server.request<Feed>("/feeds", { as: alice, body: { url: `${feeds.url}/a.xml`, project: null } });
    expect(elsewhere.status, elsewhere.text).toBe(201);
  });

  it("answers 502 when the feed fails and 422 when it is not a feed, and keeps nothing", async ({ server }) => {
    const alice = await member(server, "alice");
    feeds.route("/down.xml", { status: 500, body: "<html>secret stack trace</html>" });
    feeds.route("/page.html", { headers: { "content-type": "text/html" }, body: "<!doctype html><html><body><h1>Welcome</h1></body></html>" });
    const down = await subscribe(server, alice, { url: `${feeds.url}/down.xml?token=s3cret` });
    expect(down.status).toBe(502);
    expect(down.body.code).toBe("UPSTREAM_ERROR");
    expect(down.body.detail).toContain(`${feeds.url}/down.xml`);
    expect(down.text).not.toContain("s3cret");
    expect(down.text).not.toContain("stack trace");
    const page = await subscribe(server, alice, { url: `${feeds.url}/page.html` });
    expect(page.status).toBe(422);
    expect(page.body.detail).toMatch(/^not a feed: /);
    expect((await server.request<Feed[]>("/feeds", { as: alice })).body).toEqual([]);
  });

  it("with verify=false polls within a round of the poller", async ({ server }) => {
    const alice = await member(server, "alice");
    feeds.route("/later.xml", { headers: RSS, body: rssFeed("Later", items(3)) });
    const response = await subscribe(server, alice, { url: `${feeds.url}/later.xml` }, "?verify=false");
    expect(response.status, response.text).toBe(201);
    expect(response.body).toMatchObject({ items_ingested: 0, last_polled_at: null, name: "127.0.0.1" });
    expect(feeds.requests("/later.xml")).toHaveLength(0);
    expect(await eventually(async () => (await entriesOf(server, alice)).length === 3)).toBe(true);
    expect(feeds.requests("/later.xml")).toHaveLength(1);
  });

  it("needs membership of the project, and shows a URL's query only to the subscriber and the owner", async ({ server }) => {
    const alice = await member(server, "alice");
    const bob = await member(server, "bob");
    const mallory = await server.agent("mallory");
    feeds.route("/private.xml?token=s3cret", { headers: RSS, body: rssFeed("Private", items(1)) });
    const notMember = await subscribe(server, mallory, { url: `${feeds.url}/private.xml?token=s3cret` });
    expect(notMember.status).toBe(403);
    const feed = (await subscribe(server, alice, { url: `${feeds.url}/private.xml?token=s3cret` })).body;
    expect(feed.url).toBe(`${feeds.url}/private.xml?token=s3cret`);
    expect((await server.request<Feed>(`/feeds/${feed.id}`, { as: bob })).body.url).toBe(`${feeds.url}/private.xml`);
    expect((await server.request<Feed>(`/feeds/${feed.id}`, { as: server.owner })).body.url).toBe(`${feeds.url}/private.xml?token=s3cret`);
    expect((await server.request(`/feeds/${feed.id}`, { as: mallory })).status).toBe(404);
    expect((await server.request<Feed[]>("/feeds", { as: mallory })).body).toEqual([]);
    const events = await server.request<{ payload: unknown }[]>("/events?since=seq:0&limit=500", { as: server.owner });
    expect(JSON.stringify(events.body)).not.toContain("s3cret");
  });

  it("lets the subscriber or an owner change, poll and delete it; the entries stay", async ({ server }) => {
    const alice = await member(server, "alice");
    const bob = await member(server, "bob");
    feeds.route("/c.xml", { headers: RSS, body: rssFeed("C", items(2)) });
    const feed = (await subscribe(server, alice, { url: `${feeds.url}/c.xml` })).body;
    expect((await server.request(`/feeds/${feed.id}`, { as: bob, method: "PATCH", body: { paused: true } })).status).toBe(403);
    expect((await server.request(`/feeds/${feed.id}/poll`, { as: bob, method: "POST" })).status).toBe(403);
    expect((await server.request(`/feeds/${feed.id}`, { as: bob, method: "DELETE" })).status).toBe(403);
    const paused = await server.request<Feed>(`/feeds/${feed.id}`, { as: server.owner, method: "PATCH", body: { paused: true, name: "Changelog C", interval_minutes: 240 } });
    expect(paused.status, paused.text).toBe(200);
    expect(paused.body).toMatchObject({ paused: true, status: "paused", name: "Changelog C", interval_minutes: 240 });
    expect(Date.parse(paused.body.next_poll_at) - Date.parse(feed.last_polled_at as string)).toBe(240 * 60_000);
    const bad = await server.request<ErrorBody>(`/feeds/${feed.id}`, { as: alice, method: "PATCH", body: { interval_minutes: 5 } });
    expect(bad.status).toBe(422);
    expect((await server.request(`/feeds/${feed.id}`, { as: alice, method: "DELETE" })).status).toBe(204);
    expect((await server.request(`/feeds/${feed.id}`, { as: alice })).status).toBe(404);
    expect(await entriesOf(server, alice)).toHaveLength(2);
  });
});

describe("polling", () => {
  it.override("serverEnv", { FEEDS_ALLOW_PRIVATE: "true", FEEDS_POLL_SECONDS: "1" });

  it("asks conditionally and counts a 304 as a success with nothing new", async ({ server }) => {
    const alice = await member(server, "alice");
    const body = rssFeed("Conditional", items(2));
    feeds.route("/etag.xml", (response, headers) => {
      if (headers["if-none-match"] === '"v1"') response.writeHead(304).end();
      else response.writeHead(200, { ...RSS, etag: '"v1"', "last-modified": "Sun, 01 Mar 2026 12:00:00 GMT" }).end(body);
    });
    const feed = (await subscribe(server, alice, { url: `${feeds.url}/etag.xml` })).body;
    const polled = await server.request(`/feeds/${feed.id}/poll`, { as: alice, method: "POST" });
    expect(polled.body).toEqual({ ingested: 0, not_modified: true, status: "ok" });
    const second = feeds.requests("/etag.xml")[1];
    expect(second?.["if-none-match"]).toBe('"v1"');
    expect(second?.["if-modified-since"]).toBe("Sun, 01 Mar 2026 12:00:00 GMT");
  });

  it("runs a poll asked for while another is under way once that one ends, rather than refusing it", async ({ server }) => {
    const alice = await member(server, "alice");
    let calls = 0;
    feeds.route("/slow.xml", (response) => {
      calls++;
      // The subscription's own first poll sees nothing; the next is slow; the one after sees more.
      const answer = () => response.writeHead(200, RSS).end(rssFeed("Slow", items(calls === 1 ? 0 : calls === 2 ? 1 : 2)));
      if (calls === 2) setTimeout(answer, 1000);
      else answer();
    });
    const feed = (await subscribe(server, alice, { url: `${feeds.url}/slow.xml` })).body;
    const poll = () => server.request<FeedPollResult>(`/feeds/${feed.id}/poll`, { as: alice, method: "POST" });
    const [first, second] = await Promise.all([poll(), new Promise((resolve) => setTimeout(resolve, 200)).then(poll)]);
    expect([first.status, second.status], `${first.text} ${second.text}`).toEqual([200, 200]);
    expect([first.body.ingested, second.body.ingested]).toEqual([1, 1]);
    expect(calls).toBe(3);
  });

  it("backs off on failure, honours Retry-After, turns failing after three failures with one feed.failing, and recovers", async ({ server }) => {
    const alice = await member(server, "alice");
    let failing: { status: number; headers?: Record<string, string> } | null = null;
    feeds.route("/flaky.xml", (response) => {
      if (failing) response.writeHead(failing.status, failing.headers ?? {}).end("down");
      else response.writeHead(200, RSS).end(rssFeed("Flaky", items(1)));
    });
    const feed = (await subscribe(server, alice, { url: `${feeds.url}/flaky.xml`, interval_minutes: 15 })).body;
    failing = { status: 500 };
    const delays: number[] = [];
    for (let attempt = 1; attempt <= 4; attempt++) {
      const polled = await server.request<ErrorBody>(`/feeds/${feed.id}/poll`, { as: alice, method: "POST" });
      expect(polled.status).toBe(502);
      expect(polled.body.detail).toContain("HTTP 500");
      const now = (await server.request<Feed>(`/feeds/${feed.id}`, { as: alice })).body;
      delays.push((Date.parse(now.next_poll_at) - Date.parse(now.last_polled_at as string)) / 60_000);
      expect(now.status).toBe(attempt >= 3 ? "failing" : "ok");
      expect(now.last_error).toBe("the feed answered HTTP 500");
    }
    expect(delays).toEqual([30, 60, 120, 240]);
    const events = await server.request<{ type: string; payload: { feed_id: string; failures: number } }[]>("/events?since=seq:0&type=feed.failing", { as: alice });
    expect(events.body.map((event) => event.payload)).toEqual([{ feed_id: feed.id, project: "payments", failures: 3 }]);

    failing = { status: 503, headers: { "retry-after": "86000" } };
    await server.request(`/feeds/${feed.id}/poll`, { as: alice, method: "POST" });
    const waiting = (await server.request<Feed>(`/feeds/${feed.id}`, { as: alice })).body;
    expect((Date.parse(waiting.next_poll_at) - Date.parse(waiting.last_polled_at as string)) / 1000).toBe(86000);

    failing = null;
    const healed = await server.request(`/feeds/${feed.id}/poll`, { as: alice, method: "POST" });
    expect(healed.status).toBe(200);
    const recovered = (await server.request<Feed>(`/feeds/${feed.id}`, { as: alice })).body;
    expect(recovered).toMatchObject({ status: "ok", last_error: null });
    expect((Date.parse(recovered.next_poll_at) - Date.parse(recovered.last_polled_at as string)) / 60_000).toBe(15);
  });

  it("does not poll a paused feed, nor one that is not due, and polls a due one once", async ({ server }) => {
    const alice = await member(server, "alice");
    feeds.route("/due.xml", { headers: RSS, body: rssFeed("Due", items(1)) });
    feeds.route("/paused.xml", { headers: RSS, body: rssFeed("Paused", items(1)) });
    const due = (await subscribe(server, alice, { url: `${feeds.url}/due.xml` })).body;
    const paused = (await subscribe(server, alice, { url: `${feeds.url}/paused.xml` })).body;
    await server.request(`/feeds/${paused.id}`, { as: alice, method: "PATCH", body: { paused: true } });
    await withDatabase(server.dataDir, (db) => db.run("UPDATE feeds SET next_poll_at = ?", new Date(Date.now() - 1000).toISOString()));
    expect(await eventually(() => feeds.requests("/due.xml").length === 2)).toBe(true);
    // A few more rounds of the poller: the due feed's next poll is an hour off now, the paused one never.
    await new Promise((resolve) => setTimeout(resolve, 2_500));
    expect(feeds.requests("/due.xml")).toHaveLength(2);
    expect(feeds.requests("/paused.xml")).toHaveLength(1);
    expect((await server.request<Feed>(`/feeds/${due.id}`, { as: alice })).body.last_polled_at).not.toBeNull();
  });
});
