import { describe, expect } from "vitest";
import { createLogger } from "../../src/core/log.js";
import { test } from "../helpers/fixtures.js";
import { patch, write, type MemoryEntry } from "../helpers/memory.js";
import { atomFeed, instanceOf, jsonFeed, type JsonFeed } from "../helpers/memory-feed.js";
import type { Credentials, ErrorBody, TestServer } from "../helpers/server.js";

// The outbound feeds (CONTRACT §15): GET /memory/feed.json and /memory/feed.atom, read back as a
// feed reader reads them (feedsmith) and as a peer does (`_cairn`).

const it = test.extend("alice", ({ server }) => server.agent("alice")).extend("bob", ({ server }) => server.agent("bob"));

const idsOf = (feed: JsonFeed): string[] => feed.items.map((item) => item.id);
const withKey = (url: string, as: Credentials): string => `${url}${url.includes("?") ? "&" : "?"}agent_id=${as.agentId}&api_key=${encodeURIComponent(as.apiKey)}`;
/** A feed URL the server handed out, fetched again with credentials in the query as a reader would. */
const follow = (server: TestServer, url: string, as: Credentials) => server.request<JsonFeed>(withKey(url.slice(server.url.length), as));

async function project(server: TestServer, owner: Credentials, name: string, ...members: Credentials[]): Promise<void> {
  expect((await server.request("/projects", { as: owner, body: { name } })).status).toBe(201);
  for (const member of members) expect((await server.request(`/projects/${name}/join`, { as: member, method: "POST" })).status).toBe(200);
}

describe("GET /memory/feed.json", () => {
  it("is JSON Feed 1.1 that a feed reader reads, item by item, with Cairn's fields under _cairn", async ({ server, alice }) => {
    const first = await write(server, alice, { content: "Deploys run from main\nafter the tests pass", tags: ["deploy", "ci"], project: null, confidence: 0.7 });
    const second = await write(server, alice, { content: "The staging database is rebuilt nightly", project: null, parents: [first.id] });
    expect((await server.request(`/memory/${second.id}/headline`, { as: server.archivist, method: "PATCH", body: { headline: "Nightly staging rebuild" } })).status).toBe(200);
    const instance = await instanceOf(server);
    const { feed, read } = await jsonFeed(server, alice);

    expect(read.title).toBe(`${instance.instance_name}: Cairn memory`);
    expect(read.home_page_url).toBe(server.url);
    expect(read.feed_url).toBe(`${server.url}/memory/feed.json?limit=50`);
    expect(read.next_url).toBeUndefined();
    expect(feed.version).toBe("https://jsonfeed.org/version/1.1");
    const entries = await Promise.all([second, first].map(async (entry) => (await server.request<MemoryEntry>(`/memory/${entry.id}`, { as: alice })).body));
    expect(read.items?.map((item) => item.id)).toEqual(entries.map((entry) => entry.id));
    for (const [index, entry] of entries.entries()) {
      const item = read.items?.[index];
      expect(item?.url).toBe(`${server.url}/memory/${entry.id}`);
      expect(item?.content_text).toBe(entry.content);
      expect(item?.date_published).toBe(entry.created_at);
      expect(item?.date_modified).toBe(entry.updated_at);
      expect(item?.authors).toEqual([{ name: "alice" }]);
      expect(item?.tags ?? []).toEqual(entry.tags);
      expect(feed.items[index]?._cairn).toEqual({
        type: entry.type,
        scope: entry.scope,
        project: entry.project,
        agent_id: entry.agent_id,
        version: entry.version,
        confidence: entry.confidence,
        parents: entry.parents,
        origin: instance.instance_id,
        origin_name: instance.instance_name,
        source: entry.source,
        created_at: entry.created_at,
        updated_at: entry.updated_at,
        change_seq: expect.any(Number) as number,
      });
    }
    // The headline where there is one, else the first line.
    expect(read.items?.map((item) => item.title)).toEqual(["Nightly staging rebuild", "Deploys run from main"]);
    const [newer, older] = feed.items.map((item) => item._cairn.change_seq);
    expect(newer).toBeGreaterThan(older ?? Infinity);
    expect(feed._cairn).toEqual({ instance_id: instance.instance_id, instance_name: instance.instance_name, max_change_seq: newer });
  });

  it("cuts a title from a long first line to 80 characters", async ({ server, alice }) => {
    const line = "word ".repeat(40).trim();
    await write(server, alice, { content: `${line}\nsecond line`, project: null });
    const { feed } = await jsonFeed(server, alice);
    const title = feed.items[0]?.title ?? "";
    expect([...title].length).toBeLessThanOrEqual(80);
    expect(title.endsWith("…")).toBe(true);
    expect(line.startsWith(title.slice(0, -1))).toBe(true);
  });

  it("never carries a private entry or a directive, not to their author and not to the owner", async ({ server, alice }) => {
    const shared = await write(server, alice, { content: "Shared note", project: null });
    await write(server, alice, { content: "Alice's private note", scope: "agent", project: null });
    expect((await server.request("/memory", { as: server.owner, body: { content: "Always run the linter", type: "directive", project: null } })).status).toBe(201);
    for (const as of [alice, server.owner]) {
      expect(idsOf((await jsonFeed(server, as)).feed)).toEqual([shared.id]);
      expect(idsOf((await jsonFeed(server, as, "include_deleted=true")).feed)).toEqual([shared.id]);
      expect((await atomFeed(server, as)).read.entries?.map((entry) => entry.id)).toEqual([`urn:uuid:${shared.id}`]);
    }
    const asked = await server.request<ErrorBody>("/memory/feed.json?type=directive", { as: alice });
    expect(asked.status).toBe(422);
    expect(asked.body.errors?.[0]?.path).toBe("type");
  });

  it("leaves compiled code out unless type=compiled or source_kind=compile names it", async ({ server, alice }) => {
    const note = await write(server, alice, { content: "A note about parse()", project: null });
    const unit = { path: "lib/parse.ts", symbol: "parse", kind: "function", lang: "typescript", start_line: 1, end_line: 3, sha: "a".repeat(64), description: "function parse(): void", deps: [] };
    const compiled = await server.request<{ memory_ids: string[] }>("/compile", { as: alice, body: { project: null, units: [unit] } });
    expect(compiled.status, compiled.text).toBe(200);
    expect(idsOf((await jsonFeed(server, alice)).feed)).toEqual([note.id]);
    expect(idsOf((await jsonFeed(server, alice, "type=compiled")).feed)).toEqual(compiled.body.memory_ids);
    expect(idsOf((await jsonFeed(server, alice, "source_kind=compile")).feed)).toEqual(compiled.body.memory_ids);
  });

  it("shows only what the caller may see, filtered by project, tag, type and author", async ({ server, alice, bob }) => {
    await project(server, alice, "apollo");
    const hidden = await write(server, alice, { content: "Apollo launch checklist", project: "apollo", tags: ["launch"] });
    const globalDoc = await write(server, alice, { content: "How we write docs", project: null, type: "doc", tags: ["launch"] });
    const bobs = await write(server, bob, { content: "Bob's skill", project: null, type: "skill" });
    expect(idsOf((await jsonFeed(server, bob)).feed)).toEqual([bobs.id, globalDoc.id]);
    expect(idsOf((await jsonFeed(server, bob, "project=apollo")).feed)).toEqual([]);
    expect(idsOf((await jsonFeed(server, alice, "project=apollo")).feed)).toEqual([hidden.id]);
    expect(idsOf((await jsonFeed(server, alice, "project=")).feed)).toEqual([bobs.id, globalDoc.id]);
    expect(idsOf((await jsonFeed(server, alice, "tag=launch")).feed)).toEqual([globalDoc.id, hidden.id]);
    expect(idsOf((await jsonFeed(server, alice, "type=skill")).feed)).toEqual([bobs.id]);
    expect(idsOf((await jsonFeed(server, alice, "agent=alice")).feed)).toEqual([globalDoc.id, hidden.id]);
    expect(idsOf((await jsonFeed(server, server.owner, "project=apollo")).feed)).toEqual([hidden.id]);
  });

  it("selects entries by ids=, at most 200", async ({ server, alice, bob }) => {
    const written = [];
    for (let n = 0; n < 4; n++) written.push(await write(server, alice, { content: `Selected note ${n}`, project: null }));
    const privateOne = await write(server, alice, { content: "Not for feeds", scope: "agent", project: null });
    const [a, , c] = written as [MemoryEntry, MemoryEntry, MemoryEntry];
    const unknown = "0badc0de-0000-4000-8000-000000000000";
    const { feed } = await jsonFeed(server, bob, `ids=${a.id},${c.id},${unknown},${privateOne.id}`);
    expect(idsOf(feed)).toEqual([c.id, a.id]);
    const tooMany = Array.from({ length: 201 }, () => a.id).join(",");
    expect((await server.request(`/memory/feed.json?ids=${tooMany}`, { as: alice })).status).toBe(422);
    expect((await server.request("/memory/feed.json?ids=not-an-id", { as: alice })).status).toBe(422);
  });

  it("adds tombstones without content with include_deleted=true", async ({ server, alice }) => {
    const kept = await write(server, alice, { content: "Kept note", project: null, tags: ["a"] });
    const gone = await write(server, alice, { content: "Deleted note", project: null, tags: ["secret-ish"] });
    expect((await server.request(`/memory/${gone.id}`, { as: alice, method: "DELETE" })).status).toBe(204);
    expect(idsOf((await jsonFeed(server, alice)).feed)).toEqual([kept.id]);

    const { feed, read } = await jsonFeed(server, alice, "include_deleted=true");
    expect(idsOf(feed)).toEqual([gone.id, kept.id]);
    const tombstone = feed.items[0];
    expect(tombstone?.content_text).toBe("");
    expect(tombstone).not.toHaveProperty("title");
    expect(tombstone).not.toHaveProperty("tags");
    expect(tombstone?._cairn.deleted_at).toEqual(expect.any(String));
    expect(tombstone?.date_modified).toBe(tombstone?._cairn.deleted_at);
    // A deletion is the entry's next version.
    expect(tombstone?._cairn).toMatchObject({ version: gone.version + 1, type: "memory", agent_id: "alice" });
    expect(feed.items[1]?._cairn).not.toHaveProperty("deleted_at");
    expect(read.items?.[0]?.id).toBe(gone.id);
    expect(JSON.stringify(feed)).not.toContain("Deleted note");

    const atom = await atomFeed(server, alice, "include_deleted=true");
    expect(atom.read.entries?.map((entry) => entry.id)).toEqual([`urn:uuid:${kept.id}`]);
    expect(atom.response.text).toContain(`<at:deleted-entry ref="urn:uuid:${gone.id}" when="${tombstone?._cairn.deleted_at}"/>`);
    expect(atom.response.text).not.toContain("Deleted note");
  });

  it("with order=changes lists changes oldest first by change_seq, and since_seq continues after one", async ({ server, alice }) => {
    const a = await write(server, alice, { content: "First change", project: null });
    const b = await write(server, alice, { content: "Second change", project: null });
    const c = await write(server, alice, { content: "Third change", project: null });
    expect((await patch(server, alice, a.id, { content: "First change, edited" })).status).toBe(200);
    const { feed } = await jsonFeed(server, alice, "order=changes");
    expect(idsOf(feed)).toEqual([b.id, c.id, a.id]);
    const seqs = feed.items.map((item) => item._cairn.change_seq);
    expect([...seqs].sort((x, y) => x - y)).toEqual(seqs);
    expect(new Set(seqs).size).toBe(3);
    expect(feed._cairn.max_change_seq).toBe(seqs[2]);
    expect(idsOf((await jsonFeed(server, alice, `order=changes&since_seq=${seqs[0]}`)).feed)).toEqual([c.id, a.id]);
    expect(idsOf((await jsonFeed(server, alice, `order=changes&since_seq=${seqs[2]}`)).feed)).toEqual([]);
    const misplaced = await server.request<ErrorBody>(`/memory/feed.json?since_seq=${seqs[0]}`, { as: alice });
    expect(misplaced.status).toBe(422);
    expect(misplaced.body.errors?.[0]?.path).toBe("since_seq");
  });
});

describe("paging the feeds", () => {
  it("walks the whole selection by next_url and Link, newest first, and by change_seq", async ({ server, alice }) => {
    const written: string[] = [];
    for (let n = 0; n < 7; n++) written.push((await write(server, alice, { content: `Paged note ${n}`, project: null })).id);
    for (const [order, expected] of [["", [...written].reverse()], ["&order=changes", written]] as const) {
      const seen: string[] = [];
      let page = await server.request<JsonFeed>(`/memory/feed.json?limit=3${order}`, { as: alice });
      for (let pages = 1; ; pages++) {
        expect(page.status, page.text).toBe(200);
        seen.push(...idsOf(page.body));
        const next = page.body.next_url;
        if (next === undefined) {
          expect(page.headers.get("link")).toBeNull();
          expect(pages).toBe(3);
          break;
        }
        expect(page.headers.get("link")).toBe(`<${next}>; rel="next"`);
        expect(next).toContain(`cursor=${page.headers.get("x-next-cursor")}`);
        expect(next).not.toContain("api_key");
        page = await follow(server, next, alice);
      }
      expect(seen).toEqual(expected);
    }
  });

  it("walks the Atom feed by its link rel=next", async ({ server, alice }) => {
    const written: string[] = [];
    for (let n = 0; n < 5; n++) written.push((await write(server, alice, { content: `Atom paged note ${n}`, project: null })).id);
    const seen: string[] = [];
    let query = "limit=2";
    for (;;) {
      const { read } = await atomFeed(server, alice, query);
      seen.push(...(read.entries ?? []).map((entry) => entry.id ?? ""));
      const next = read.links?.find((link) => link.rel === "next")?.href;
      if (next === undefined) break;
      query = next.slice(next.indexOf("?") + 1);
    }
    expect(seen).toEqual([...written].reverse().map((id) => `urn:uuid:${id}`));
  });
});

describe("ETag and If-None-Match", () => {
  it("answers 304 with no body while the page is unchanged, and 200 with a new ETag after a change", async ({ server, alice }) => {
    const entry = await write(server, alice, { content: "Cached note", project: null });
    for (const path of ["/memory/feed.json", "/memory/feed.atom"]) {
      const first = await server.request(path, { as: alice });
      const etag = first.headers.get("etag") ?? "";
      expect(etag).toMatch(/^"[A-Za-z0-9_-]+"$/);
      expect((await server.request(path, { as: alice })).headers.get("etag")).toBe(etag);
      for (const ifNoneMatch of [etag, `W/${etag}`, `"other", ${etag}`, "*"]) {
        const again = await server.request(path, { as: alice, headers: { "if-none-match": ifNoneMatch } });
        expect(again.status, ifNoneMatch).toBe(304);
        expect(again.text).toBe("");
        expect(again.headers.get("etag")).toBe(etag);
      }
      expect((await server.request(path, { as: alice, headers: { "if-none-match": '"other"' } })).status).toBe(200);
      // Another page of the same feed is another representation.
      expect((await server.request(`${path}?limit=1`, { as: alice, headers: { "if-none-match": etag } })).status).toBe(200);
    }
    const etags = await Promise.all(["/memory/feed.json", "/memory/feed.atom"].map(async (path) => (await server.request(path, { as: alice })).headers.get("etag") ?? ""));
    expect((await patch(server, alice, entry.id, { tags: ["changed"] })).status).toBe(200);
    for (const [index, path] of ["/memory/feed.json", "/memory/feed.atom"].entries()) {
      const changed = await server.request(path, { as: alice, headers: { "if-none-match": etags[index] ?? "" } });
      expect(changed.status).toBe(200);
      expect(changed.headers.get("etag")).not.toBe(etags[index]);
    }
  });
});

describe("GET /memory/feed.atom", () => {
  it("is Atom that a feed reader reads: urn:uuid ids, text title and content, a category per tag", async ({ server, alice }) => {
    const entry = await write(server, alice, { content: "Use <b>plain</b> & simple text\nin \"feeds\"", tags: ["x & y", "<tag>"], project: null });
    const { response, read } = await atomFeed(server, alice);
    const instance = await instanceOf(server);
    expect(read.id).toMatch(/^urn:uuid:[0-9a-f]{8}-[0-9a-f]{4}-5[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/);
    expect(read.title).toEqual({ value: `${instance.instance_name}: Cairn memory`, type: "text" });
    expect(read.updated).toBe(entry.updated_at);
    expect(read.links).toEqual(expect.arrayContaining([{ rel: "self", type: "application/atom+xml", href: `${server.url}/memory/feed.atom?limit=50` }]));
    const [item] = read.entries ?? [];
    expect(item?.id).toBe(`urn:uuid:${entry.id}`);
    expect(item?.title).toEqual({ value: "Use <b>plain</b> & simple text", type: "text" });
    expect(item?.content).toEqual({ value: entry.content, type: "text" });
    expect(item?.published).toBe(entry.created_at);
    expect(item?.updated).toBe(entry.updated_at);
    expect(item?.authors).toEqual([{ name: "alice" }]);
    expect(item?.categories).toEqual([{ term: "x & y" }, { term: "<tag>" }]);
    expect(item?.links).toEqual([{ rel: "alternate", href: `${server.url}/memory/${entry.id}` }]);
    expect(response.text).not.toMatch(/type="(x)?html"/);
    // The same selection has the same feed id on every fetch and page; another selection another.
    expect((await atomFeed(server, alice, "limit=1")).read.id).toBe(read.id);
    expect((await atomFeed(server, alice, "tag=x%20%26%20y")).read.id).not.toBe(read.id);
  });

  it("removes the characters XML forbids before escaping, and keeps the rest", async ({ server, alice }) => {
    const forbidden = "\u0001\u0008\u000B\u000C\u001F\uFFFE\uFFFF";
    const content = `Control${forbidden} characters <here> & ]]> there\r\nline "two" 'three' \u00e9\u{1F600}`;
    const entry = await write(server, alice, { content, tags: [`t${forbidden}ag`], project: null });
    const { response, read } = await atomFeed(server, alice);
    const clean = (text: string): string => [...text].filter((char) => !forbidden.includes(char)).join("");
    // The JSON Feed carries the text as it is (JSON can), the Atom feed the same without them.
    const json = (await jsonFeed(server, alice)).feed.items[0];
    expect(json?.content_text).toBe(content);
    expect(read.entries?.[0]?.id).toBe(`urn:uuid:${entry.id}`);
    expect(read.entries?.[0]?.content?.value).toBe(clean(content));
    expect(read.entries?.[0]?.title?.value).toBe(clean(json?.title ?? ""));
    expect(read.entries?.[0]?.title?.value).toContain("characters <here> & ]]> there");
    expect(read.entries?.[0]?.categories).toEqual([{ term: "tag" }]);
    expect(response.text).toContain("&#13;");
  });
});

describe("credentials in the query", () => {
  const lines: string[] = [];
  const it = test
    .extend("alice", ({ server }) => server.agent("alice"))
    .override("serverOptions", { log: createLogger("debug", {}, (line) => lines.push(line)) });

  it("are accepted on the feed and merkle routes, refused elsewhere, and never logged, linked or echoed", async ({ server, alice }) => {
    await write(server, alice, { content: "Read by a feed reader", project: null });
    for (let n = 0; n < 2; n++) await write(server, alice, { content: `More for the reader ${n}`, project: null });
    const key = `agent_id=${alice.agentId}&api_key=${encodeURIComponent(alice.apiKey)}`;
    const wrong = `agent_id=${alice.agentId}&api_key=cairn_wrong_key_in_query`;

    for (const path of ["/memory/feed.json?limit=1&", "/memory/feed.atom?limit=1&", "/memory/merkle?project=&"]) {
      const accepted = await server.request(`${path}${key}`);
      expect(accepted.status, accepted.text).toBe(200);
      expect(accepted.text).not.toContain(alice.apiKey);
      expect(accepted.headers.get("link") ?? "").not.toContain("api_key");
      expect((await server.request(`${path}${wrong}`)).status).toBe(401);
      expect((await server.request(`${path}agent_id=${alice.agentId}`)).status).toBe(401);
    }
    // Headers win; the query's credentials are then ignored, never input.
    expect((await server.request(`/memory/feed.json?${wrong}`, { as: alice })).status).toBe(200);

    // Elsewhere they are no credentials (401) and, beside real ones, unknown parameters (422).
    expect((await server.request(`/memory?${key}`)).status).toBe(401);
    expect((await server.request(`/memory/search?q=reader&${key}`)).status).toBe(401);
    const unknown = await server.request<ErrorBody>(`/memory?${key}`, { as: alice });
    expect(unknown.status).toBe(422);
    expect(unknown.body.errors?.map((error) => error.path).sort()).toEqual(["agent_id", "api_key"]);
    expect(unknown.text).not.toContain(alice.apiKey);
    // A refusal after authentication, a route that does not exist, a 304.
    expect((await server.request(`/memory/feed.json?limit=0&${key}`)).status).toBe(422);
    expect((await server.request(`/memory/merkle?project=nowhere&${key}`)).status).toBe(404);
    expect((await server.request(`/no/such/route?${key}`)).status).toBe(404);
    const etag = (await server.request(`/memory/feed.json?${key}`)).headers.get("etag") ?? "";
    expect((await server.request(`/memory/feed.json?${key}`, { headers: { "if-none-match": etag } })).status).toBe(304);

    const requests = lines.filter((line) => line.includes('"msg":"request"'));
    expect(requests.length).toBeGreaterThan(15);
    expect(requests.some((line) => line.includes('"path":"/memory/feed.json"'))).toBe(true);
    const leaked = lines.filter((line) => line.includes(alice.apiKey) || line.includes("cairn_wrong_key_in_query") || line.includes("api_key"));
    expect(leaked).toEqual([]);
    // Nor in what the server recorded as events.
    const events = await server.request(`/events?since=seq:0&limit=500`, { as: server.owner });
    expect(events.text).not.toContain(alice.apiKey);
  });
});
