/**
 * Feed documents in every dialect Cairn reads (CONTRACT §15), generated with as many items as a
 * test asks for: the unit tests parse them, and fixture HTTP servers and benchmarks can serve them
 * (say 100 feeds of 20 items). Everything is derived from the feed's name and the item's index, so
 * a test can state exactly what each item must become.
 */

export const FEED_DIALECTS = ["rss-0.91", "rss-0.92", "rss-1.0", "rss-2.0", "atom-0.3", "atom-1.0", "json-1.0", "json-1.1"] as const;

export type FeedDialect = (typeof FEED_DIALECTS)[number];

export interface FixtureItem {
  /** A guid where the dialect has one (RSS 0.91 and 0.92 have none). */
  id: string;
  title: string;
  link: string;
  published: Date;
  /** The body as plain text, and the same body as the HTML the feed carries. */
  text: string;
  html: string;
}

export interface FixtureFeed {
  name: string;
  title: string;
  link: string;
  items: FixtureItem[];
}

export interface FixtureDocument {
  dialect: FeedDialect;
  feed: FixtureFeed;
  body: string;
  contentType: string;
}

export interface FixtureOptions {
  /** Names the feed and everything in it; "fixture" unless told. */
  name?: string;
  /** The newest item's date; each older item is an hour earlier. */
  newest?: Date;
  /** The first item's index (items count down from the newest), for a feed that grows between polls. */
  firstIndex?: number;
}

const ORIGIN = "https://feeds.example.test";

function fixtureFeed(count: number, options: FixtureOptions = {}): FixtureFeed {
  const name = options.name ?? "fixture";
  const newest = options.newest ?? new Date("2026-03-01T12:00:00Z");
  const firstIndex = options.firstIndex ?? count;
  const items = Array.from({ length: count }, (_, offset): FixtureItem => {
    const index = firstIndex - offset;
    return {
      id: `urn:cairn-fixture:${name}:${index}`,
      title: `Item ${index} of ${name}`,
      link: `${ORIGIN}/${name}/items/${index}`,
      published: new Date(newest.getTime() - offset * 3_600_000),
      text: `Body of item ${index} of ${name}, with bold text & an ampersand.`,
      html: `<p>Body of item ${index} of ${name}, with <b>bold</b> text &amp; an ampersand.</p>`,
    };
  });
  return { name, title: `The ${name} feed`, link: `${ORIGIN}/${name}/`, items };
}

/** A feed of `count` items written in `dialect`, with the Content-Type a server would send. */
export function fixtureDocument(dialect: FeedDialect, count: number, options: FixtureOptions = {}): FixtureDocument {
  const feed = fixtureFeed(count, options);
  return { dialect, feed, ...renderFeed(dialect, feed) };
}

export function renderFeed(dialect: FeedDialect, feed: FixtureFeed): { body: string; contentType: string } {
  switch (dialect) {
    case "rss-0.91":
      return { body: rss091(feed), contentType: "application/rss+xml; charset=utf-8" };
    case "rss-0.92":
      return { body: rss092(feed), contentType: "application/rss+xml; charset=utf-8" };
    case "rss-1.0":
      return { body: rss10(feed), contentType: "application/rdf+xml; charset=utf-8" };
    case "rss-2.0":
      return { body: rss20(feed), contentType: "application/rss+xml; charset=utf-8" };
    case "atom-0.3":
      return { body: atom03(feed), contentType: "application/atom+xml; charset=utf-8" };
    case "atom-1.0":
      return { body: atom10(feed), contentType: "application/atom+xml; charset=utf-8" };
    case "json-1.0":
      return { body: jsonFeed(feed, "1"), contentType: "application/feed+json" };
    case "json-1.1":
      return { body: jsonFeed(feed, "1.1"), contentType: "application/feed+json" };
  }
}

/** What each dialect is expected to key its items by (CONTRACT §15: guid, else link). */
export function expectedKeyKind(dialect: FeedDialect): "guid" | "link" {
  return dialect === "rss-0.91" || dialect === "rss-0.92" ? "link" : "guid";
}

/** Whether the dialect dates its items. */
export function datesItems(dialect: FeedDialect): boolean {
  return dialect !== "rss-0.91" && dialect !== "rss-0.92";
}

const escapeXml = (text: string): string => text.replaceAll("&", "&amp;").replaceAll("<", "&lt;").replaceAll(">", "&gt;").replaceAll('"', "&quot;");

const cdata = (text: string): string => `<![CDATA[${text.replaceAll("]]>", "]]]]><![CDATA[>")}]]>`;

const rfc822 = (date: Date): string => date.toUTCString();

const w3c = (date: Date): string => date.toISOString().replace(/\.\d{3}Z$/, "Z");

function rss091(feed: FixtureFeed): string {
  const items = feed.items.map((item) => `    <item>\n      <title>${escapeXml(item.title)}</title>\n      <link>${escapeXml(item.link)}</link>\n      <description>${escapeXml(item.html)}</description>\n    </item>`);
  return `<?xml version="1.0" encoding="UTF-8"?>
<!DOCTYPE rss PUBLIC "-//Netscape Communications//DTD RSS 0.91//EN" "http://my.netscape.com/publish/formats/rss-0.91.dtd">
<rss version="0.91">
  <channel>
    <title>${escapeXml(feed.title)}</title>
    <link>${escapeXml(feed.link)}</link>
    <description>A fixture feed in RSS 0.91</description>
    <language>en-us</language>
${items.join("\n")}
  </channel>
</rss>
`;
}

function rss092(feed: FixtureFeed): string {
  const items = feed.items.map(
    (item) =>
      `    <item>\n      <title>${escapeXml(item.title)}</title>\n      <link>${escapeXml(item.link)}</link>\n      <description>${escapeXml(item.html)}</description>\n      <category>fixtures</category>\n      <source url="${escapeXml(feed.link)}">${escapeXml(feed.title)}</source>\n    </item>`,
  );
  return `<?xml version="1.0" encoding="UTF-8"?>
<rss version="0.92">
  <channel>
    <title>${escapeXml(feed.title)}</title>
    <link>${escapeXml(feed.link)}</link>
    <description>A fixture feed in RSS 0.92</description>
${items.join("\n")}
  </channel>
</rss>
`;
}

function rss10(feed: FixtureFeed): string {
  const sequence = feed.items.map((item) => `        <rdf:li rdf:resource="${escapeXml(item.id)}"/>`);
  const items = feed.items.map(
    (item) =>
      `  <item rdf:about="${escapeXml(item.id)}">\n    <title>${escapeXml(item.title)}</title>\n    <link>${escapeXml(item.link)}</link>\n    <description>${escapeXml(item.html)}</description>\n    <dc:date>${w3c(item.published)}</dc:date>\n  </item>`,
  );
  return `<?xml version="1.0" encoding="UTF-8"?>
<rdf:RDF xmlns:rdf="http://www.w3.org/1999/02/22-rdf-syntax-ns#" xmlns="http://purl.org/rss/1.0/" xmlns:dc="http://purl.org/dc/elements/1.1/">
  <channel rdf:about="${escapeXml(feed.link)}">
    <title>${escapeXml(feed.title)}</title>
    <link>${escapeXml(feed.link)}</link>
    <description>A fixture feed in RSS 1.0</description>
    <items>
      <rdf:Seq>
${sequence.join("\n")}
      </rdf:Seq>
    </items>
  </channel>
${items.join("\n")}
</rdf:RDF>
`;
}

function rss20(feed: FixtureFeed): string {
  const items = feed.items.map(
    (item) =>
      `    <item>\n      <title>${escapeXml(item.title)}</title>\n      <link>${escapeXml(item.link)}</link>\n      <guid isPermaLink="false">${escapeXml(item.id)}</guid>\n      <pubDate>${rfc822(item.published)}</pubDate>\n      <description>${escapeXml(item.text)}</description>\n      <content:encoded>${cdata(item.html)}</content:encoded>\n    </item>`,
  );
  return `<?xml version="1.0" encoding="UTF-8"?>
<rss version="2.0" xmlns:content="http://purl.org/rss/1.0/modules/content/" xmlns:atom="http://www.w3.org/2005/Atom">
  <channel>
    <title>${escapeXml(feed.title)}</title>
    <link>${escapeXml(feed.link)}</link>
    <description>A fixture feed in RSS 2.0</description>
    <atom:link href="${escapeXml(feed.link)}rss.xml" rel="self" type="application/rss+xml"/>
${items.join("\n")}
  </channel>
</rss>
`;
}

function atom03(feed: FixtureFeed): string {
  const entries = feed.items.map(
    (item) =>
      `  <entry>\n    <title>${escapeXml(item.title)}</title>\n    <link rel="alternate" type="text/html" href="${escapeXml(item.link)}"/>\n    <id>${escapeXml(item.id)}</id>\n    <issued>${w3c(item.published)}</issued>\n    <modified>${w3c(item.published)}</modified>\n    <content type="text/html" mode="escaped">${escapeXml(item.html)}</content>\n  </entry>`,
  );
  return `<?xml version="1.0" encoding="UTF-8"?>
<feed version="0.3" xmlns="http://purl.org/atom/ns#">
  <title>${escapeXml(feed.title)}</title>
  <link rel="alternate" type="text/html" href="${escapeXml(feed.link)}"/>
  <modified>${w3c(feed.items[0]?.published ?? new Date(0))}</modified>
${entries.join("\n")}
</feed>
`;
}

function atom10(feed: FixtureFeed): string {
  const entries = feed.items.map(
    (item) =>
      `  <entry>\n    <title type="text">${escapeXml(item.title)}</title>\n    <link rel="alternate" type="text/html" href="${escapeXml(item.link)}"/>\n    <id>${escapeXml(item.id)}</id>\n    <published>${w3c(item.published)}</published>\n    <updated>${w3c(item.published)}</updated>\n    <summary type="text">${escapeXml(item.title)}</summary>\n    <content type="html">${escapeXml(item.html)}</content>\n  </entry>`,
  );
  return `<?xml version="1.0" encoding="UTF-8"?>
<feed xmlns="http://www.w3.org/2005/Atom">
  <title>${escapeXml(feed.title)}</title>
  <id>${escapeXml(feed.link)}</id>
  <link rel="alternate" href="${escapeXml(feed.link)}"/>
  <updated>${w3c(feed.items[0]?.published ?? new Date(0))}</updated>
${entries.join("\n")}
</feed>
`;
}

function jsonFeed(feed: FixtureFeed, version: "1" | "1.1"): string {
  const items = feed.items.map((item) => ({
    id: item.id,
    url: item.link,
    title: item.title,
    // 1.1 carries the plain-text body (the path of content_text), 1.0 the HTML one.
    ...(version === "1" ? { content_html: item.html } : { content_text: item.text }),
    date_published: w3c(item.published),
    ...(version === "1" ? { author: { name: "Fixture" } } : { authors: [{ name: "Fixture" }] }),
  }));
  return `${JSON.stringify({ version: `https://jsonfeed.org/version/${version}`, title: feed.title, home_page_url: feed.link, items }, null, 2)}\n`;
}
