import { afterAll, beforeAll, describe, expect } from "vitest";
import { newestItems } from "../../src/services/feeds/items.js";
import { FeedDocumentError, parseFeedDocument } from "../../src/services/feeds/parse.js";
import { onPostgres } from "../helpers/database.js";
import { corpusDocuments, type CorpusDocument } from "../helpers/feedparser-corpus.js";
import { startFeedServer, type FeedServer } from "../helpers/feed-server.js";
import { it } from "../helpers/fixtures.js";
import { markupResidue } from "../helpers/markup-residue.js";
import type { Credentials, TestServer } from "../helpers/server.js";

// The feedparser corpus (test/fixtures/feeds/feedparser, BSD-2-Clause) through a real server:
// every well-formed document with items is subscribed to over HTTP, its items become entries, and
// what is stored is plain text. test/unit/feed-corpus.test.ts holds the parser to every case; this
// holds the whole path — fetch, parse in the worker, write — to them.

const MAX_ITEMS = 100;
const FOLDERS = ["sanitize", "amp", "atom", "atom10", "base", "feedburner", "geo", "http", "itunes", "lang", "media-rss", "namespace", "node_precedence", "psc", "rdf", "rss", "sgml", "xml"];

/** A document and the items of it that carry something to remember, as the server must ingest them. */
interface Case {
  path: string;
  document: CorpusDocument;
  items: number;
}

function withItems(): Case[] {
  const cases: Case[] = [];
  for (const folder of FOLDERS) {
    for (const document of corpusDocuments(`wellformed/${folder}`)) {
      try {
        const parsed = parseFeedDocument(document.bytes, document.contentType, { baseUrl: "http://127.0.0.1/" });
        const items = newestItems(parsed.items, 65536).filter((item) => item.content !== null).length;
        if (items > 0) cases.push({ path: `/${document.path}`, document, items: Math.min(items, MAX_ITEMS) });
      } catch (error) {
        if (!(error instanceof FeedDocumentError)) throw error;
      }
    }
  }
  return cases;
}

const cases = withItems();
let feeds: FeedServer;
beforeAll(async () => {
  feeds = await startFeedServer();
  for (const { path, document } of cases) {
    feeds.route(path, { headers: document.contentType ? { "content-type": document.contentType } : {}, body: document.bytes });
  }
});
afterAll(() => feeds.close());

/** A project holds at most 200 subscriptions: the corpus is spread over a few. */
const PROJECTS = ["corpus-1", "corpus-2", "corpus-3", "corpus-4"];

async function member(server: TestServer): Promise<Credentials> {
  const alice = await server.agent("alice");
  for (const name of PROJECTS) expect((await server.request("/projects", { as: alice, body: { name } })).status).toBe(201);
  return alice;
}

// What this holds is the backend's no more than the parser's: the write path it ends in is the
// ordinary one, which the feed tests run on PostgreSQL too. On SQLite it takes 4 s, there 27.
describe.skipIf(onPostgres)("the feedparser corpus through the server", () => {
  it.override("serverEnv", { FEEDS_ALLOW_PRIVATE: "true" });

  it("ingests every well-formed document with items, and stores only plain text", async ({ server }) => {
    expect(cases.length).toBeGreaterThan(400);
    const alice = await member(server);
    const problems: string[] = [];
    const queue = cases.map((entry, index) => ({ ...entry, project: PROJECTS[index % PROJECTS.length] as string }));
    const worker = async (): Promise<void> => {
      for (let next = queue.shift(); next; next = queue.shift()) {
        const response = await server.request<{ items_ingested: number }>("/feeds", {
          as: alice,
          body: { url: `${feeds.url}${next.path}`, project: next.project, max_items_per_poll: MAX_ITEMS },
        });
        if (response.status !== 201) problems.push(`${next.path}: ${response.status} ${response.text}`);
        else if (response.body.items_ingested !== next.items) problems.push(`${next.path}: ${response.body.items_ingested} of ${next.items} items ingested`);
      }
    };
    await Promise.all([worker(), worker(), worker(), worker()]);
    expect(problems).toEqual([]);

    let entries = 0;
    for (const project of PROJECTS) {
      for (let cursor: string | null = ""; cursor !== null; ) {
        const page: { status: number; headers: Headers; body: { id: string; content: string }[] } = await server.request(
          `/memory?project=${project}&source_kind=feed&limit=500${cursor ? `&cursor=${cursor}` : ""}`,
          { as: alice },
        );
        expect(page.status).toBe(200);
        for (const entry of page.body) {
          const residue = markupResidue(entry.content.replace(/\n\nSource: \S+$/, ""));
          if (residue.length > 0) problems.push(`${entry.id}: ${residue.join(", ")}`);
        }
        entries += page.body.length;
        cursor = page.headers.get("x-next-cursor");
      }
    }
    expect(problems).toEqual([]);
    // Many sanitiser cases hold the same text once cleaned: the duplicate check makes them one entry, reinforced.
    expect(entries).toBeGreaterThan(100);
  }, 180_000);
});
