import { describe, expect, it } from "vitest";
import { itemEntry } from "../../src/services/feeds/item-entry.js";
import { parseFeedDocument } from "../../src/services/feeds/parse.js";
import { datesItems, expectedKeyKind, FEED_DIALECTS, fixtureDocument } from "../helpers/feed-fixtures.js";

const FORMAT = {
  "rss-0.91": "rss",
  "rss-0.92": "rss",
  "rss-1.0": "rdf",
  "rss-2.0": "rss",
  "atom-0.3": "atom",
  "atom-1.0": "atom",
  "json-1.0": "json",
  "json-1.1": "json",
} as const;

describe("every dialect CONTRACT §15 names becomes the same entries", () => {
  it.each(FEED_DIALECTS)("%s: each item, in order, with its key and the content the contract lays out", (dialect) => {
    const document = fixtureDocument(dialect, 20, { name: `news-${dialect}` });
    const parsed = parseFeedDocument(Buffer.from(document.body, "utf8"), document.contentType);
    expect(parsed.format).toBe(FORMAT[dialect]);
    expect(parsed.title).toBe(document.feed.title);
    expect(parsed.items).toHaveLength(20);
    parsed.items.forEach((item, index) => {
      const expected = document.feed.items[index];
      if (expected === undefined) throw new Error("fewer fixture items than parsed ones");
      const entry = itemEntry(item, 65_536);
      const kind = expectedKeyKind(dialect);
      expect(entry.kind).toBe(kind);
      expect(entry.key).toBe(kind === "guid" ? expected.id : expected.link);
      const published = datesItems(dialect) ? `\n${expected.published.toISOString().replace(".000Z", "Z")}` : "";
      expect(entry.content).toBe(`## ${expected.title}${published}\n\n${expected.text}\n\nSource: ${expected.link}`);
    });
  });

  it.each(FEED_DIALECTS)("%s: a feed without items parses to none", (dialect) => {
    const document = fixtureDocument(dialect, 0);
    expect(parseFeedDocument(document.body, document.contentType).items).toEqual([]);
  });

  it("generates large feeds too: 100 feeds of 20 items, all distinct", () => {
    const keys = new Set<string>();
    for (let feed = 0; feed < 100; feed++) {
      const dialect = FEED_DIALECTS[feed % FEED_DIALECTS.length] ?? "rss-2.0";
      const document = fixtureDocument(dialect, 20, { name: `feed-${feed}` });
      for (const item of parseFeedDocument(document.body, document.contentType).items) keys.add(itemEntry(item, 65_536).key);
    }
    expect(keys.size).toBe(2000);
  });
});
