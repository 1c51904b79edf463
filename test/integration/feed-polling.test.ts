import { rmSync } from "node:fs";
import { afterAll, afterEach, beforeAll, describe, expect } from "vitest";
import type { Feed } from "../../src/wire/feeds.js";
import { onPostgres, withDatabase } from "../helpers/database.js";
import { startFeedServer, type FeedServer } from "../helpers/feed-server.js";
import { expectedKeyKind, FEED_DIALECTS, fixtureDocument } from "../helpers/feed-fixtures.js";
import { it } from "../helpers/fixtures.js";
import { startGroup, type Group } from "../helpers/group.js";
import { startTestServer, tempDir, type Credentials, type ErrorBody, type TestServer } from "../helpers/server.js";
import { eventually } from "../helpers/wait.js";

// CONTRACT §15 "Polling": every dialect, hostile documents, the durable schedule across a restart,
// and several servers sharing one feed.

let feeds: FeedServer;
beforeAll(async () => {
  feeds = await startFeedServer();
});
afterAll(() => feeds.close());

async function member(server: Pick<TestServer, "request" | "agent">, project = "polling"): Promise<Credentials> {
  const alice = await server.agent("alice");
  expect((await server.request("/projects", { as: alice, body: { name: project } })).status).toBe(201);
  return alice;
}

const subscribe = (server: Pick<TestServer, "request">, as: Credentials, url: string, query = "") =>
  server.request<Feed & ErrorBody>(`/feeds${query}`, { as, body: { url, project: "polling" } });

describe("every dialect", () => {
  it.override("serverEnv", { FEEDS_ALLOW_PRIVATE: "true" });

  it("is fetched, parsed and turned into entries keyed as the dialect keys them", async ({ server }) => {
    const alice = await member(server);
    for (const dialect of FEED_DIALECTS) {
      const document = fixtureDocument(dialect, 4, { name: dialect });
      feeds.route(`/${dialect}`, { headers: { "content-type": document.contentType }, body: document.body });
      const response = await subscribe(server, alice, `${feeds.url}/${dialect}`);
      expect(response.status, `${dialect}: ${response.text}`).toBe(201);
      expect(response.body.items_ingested, dialect).toBe(4);
      const entries = await server.request<{ content: string; source: { guid: string; url: string | null } }[]>(`/memory?project=polling&source_kind=feed&tag=feed-item&limit=100`, { as: alice });
      const mine = entries.body.filter((entry) => entry.content.includes(`of ${dialect}`));
      expect(mine, dialect).toHaveLength(4);
      const keys = mine.map((entry) => entry.source.guid).sort();
      const expected = document.feed.items.map((item) => (expectedKeyKind(dialect) === "guid" ? item.id : item.link)).sort();
      expect(keys, dialect).toEqual(expected);
    }
  });
});

describe("a hostile document", () => {
  it.override("serverEnv", { FEEDS_ALLOW_PRIVATE: "true" });

  const laughs = `<?xml version="1.0"?>
<!DOCTYPE lolz [
 <!ENTITY lol "lol">
 <!ENTITY lol2 "&lol;&lol;&lol;&lol;&lol;&lol;&lol;&lol;&lol;&lol;">
 <!ENTITY lol3 "&lol2;&lol2;&lol2;&lol2;&lol2;&lol2;&lol2;&lol2;&lol2;&lol2;">
 <!ENTITY lol9 "&lol3;&lol3;&lol3;&lol3;&lol3;&lol3;&lol3;&lol3;&lol3;&lol3;">
]>
<rss version="2.0"><channel><title>&lol9;</title><item><title>&lol9;</title></item></channel></rss>`;
  const external = `<?xml version="1.0"?>
<!DOCTYPE rss [<!ENTITY secret SYSTEM "file:///etc/passwd">]>
<rss version="2.0"><channel><title>t</title><item><title>&secret;</title><guid>x</guid></item></channel></rss>`;
  const rss = { "content-type": "application/rss+xml" };
  const cases: [string, Parameters<FeedServer["route"]>[1]][] = [
    ["billion laughs", { headers: rss, body: laughs }],
    ["external entity", { headers: rss, body: external }],
    ["malformed XML", { headers: rss, body: `<?xml version="1.0"?><rss version="2.0"><channel><title>t</title><item><title>x</item></channel>` }],
    ["an HTML page", { headers: { "content-type": "text/html" }, body: "<!doctype html><html><head><title>Home</title></head><body><p>Hello</p></body></html>" }],
    ["a 6 MiB body", { headers: rss, body: `<rss version="2.0"><channel><title>big</title>${"<item><title>x</title></item>".repeat(6 * 1024 * 36)}</channel></rss>` }],
    [
      "a body that never ends",
      (response) => {
        response.writeHead(200, rss);
        const chunk = `<item><title>${"x".repeat(8000)}</title></item>`;
        response.write(`<rss version="2.0"><channel><title>endless</title>`);
        const pump = (): void => {
          while (response.write(chunk)) if (response.destroyed) return;
          if (!response.destroyed) response.once("drain", pump);
        };
        response.on("close", () => response.removeAllListeners("drain"));
        pump();
      },
    ],
  ];

  it("costs one failed poll and nothing more", async ({ server }) => {
    const alice = await member(server);
    for (const [name, route] of cases) {
      const path = `/hostile/${name.replaceAll(" ", "-")}`;
      feeds.route(path, route);
      const feed = await subscribe(server, alice, `${feeds.url}${path}`, "?verify=false");
      expect(feed.status, name).toBe(201);
      const polled = await server.request<ErrorBody>(`/feeds/${feed.body.id}/poll`, { as: alice, method: "POST" });
      expect(polled.status, `${name}: ${polled.text}`).toBe(502);
      const after = (await server.request<Feed>(`/feeds/${feed.body.id}`, { as: alice })).body;
      expect(after.status, name).toBe("ok");
      expect(after.last_error, name).not.toBeNull();
      expect(after.last_error, name).not.toContain("root:");
    }
    // Nothing was written, and the server answers as before.
    expect((await server.request<unknown[]>("/memory?project=polling&source_kind=feed", { as: alice })).body).toEqual([]);
    expect((await server.request("/memory", { as: alice, body: { content: "still here", project: "polling" } })).status).toBe(201);
  });
});

describe("a restart", () => {
  const dirs: string[] = [];
  afterEach(() => {
    for (const dir of dirs.splice(0)) rmSync(dir, { recursive: true, force: true });
  });

  it("neither skips a poll that fell due while the server was down nor polls what is not due", async () => {
    const dir = tempDir();
    dirs.push(dir);
    const env = { DATA_DIR: dir, FEEDS_ALLOW_PRIVATE: "true", FEEDS_POLL_SECONDS: "1" };
    const document = fixtureDocument("atom-1.0", 2, { name: "restart" }).body;
    feeds.route("/restart/polled.xml", { headers: { "content-type": "application/atom+xml" }, body: document });
    feeds.route("/restart/due.xml", { headers: { "content-type": "application/atom+xml" }, body: document });
    let server = await startTestServer(env);
    try {
      const alice = await member(server);
      const polled = await subscribe(server, alice, `${feeds.url}/restart/polled.xml`);
      const due = await subscribe(server, alice, `${feeds.url}/restart/due.xml`);
      expect([polled.status, due.status]).toEqual([201, 201]);
      await server.close();
      // While it was down, one feed fell due.
      await withDatabase(dir, (db) => db.run("UPDATE feeds SET next_poll_at = ? WHERE id = ?", new Date(Date.now() - 3600_000).toISOString(), due.body.id));
      server = await startTestServer(env);
      expect(await eventually(() => feeds.requests("/restart/due.xml").length === 2)).toBe(true);
      await new Promise((resolve) => setTimeout(resolve, 2_500));
      expect(feeds.requests("/restart/due.xml")).toHaveLength(2);
      expect(feeds.requests("/restart/polled.xml")).toHaveLength(1);
    } finally {
      await server.close();
    }
  });
});

describe.runIf(onPostgres)("three servers on one database", () => {
  let group: Group;
  beforeAll(async () => {
    group = await startGroup(3, () => ({ FEEDS_ALLOW_PRIVATE: "true", FEEDS_POLL_SECONDS: "1" }));
  }, 60_000);
  afterAll(() => group.stop());

  it("poll a feed once per interval between them", async () => {
    const get = group.on(0);
    const alice = await group.agent("alice");
    expect((await get("/projects", { as: alice, body: { name: "polling" } })).status).toBe(201);
    feeds.route("/shared.xml", { headers: { "content-type": "application/feed+json" }, body: fixtureDocument("json-1.1", 3, { name: "shared" }).body });
    const feed = await get<Feed>("/feeds?verify=false", { as: alice, body: { url: `${feeds.url}/shared.xml`, project: "polling" } });
    expect(feed.status, feed.text).toBe(201);
    // Each server's poller looks every second: a few rounds of all three pass while the feed is not due again.
    for (let round = 1; round <= 3; round++) {
      expect(await eventually(() => feeds.requests("/shared.xml").length >= round), `round ${round}`).toBe(true);
      await new Promise((resolve) => setTimeout(resolve, 3_000));
      expect(feeds.requests("/shared.xml"), `round ${round}`).toHaveLength(round);
      // Made due again once the round's poll has given its lease back: the poll's end sets the next
      // time, and on a loaded machine it may end after the three seconds.
      const due = new Date(Date.now() - 1000).toISOString();
      const madeDue = (): Promise<boolean> =>
        withDatabase(group.dataDir, async (db) => (await db.get("UPDATE feeds SET next_poll_at = ? WHERE id = ? AND lease_holder IS NULL RETURNING id", due, feed.body.id)) !== undefined);
      expect(await eventually(madeDue), `round ${round}`).toBe(true);
    }
    const entries = await get<unknown[]>("/memory?project=polling&source_kind=feed", { as: alice });
    expect(entries.body).toHaveLength(3);
  }, 120_000);
});
