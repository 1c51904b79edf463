import { detectAtomFeed, DetectError, detectJsonFeed, detectRdfFeed, detectRssFeed, ParseError, parseFeed } from "feedsmith";
import type { AnyFeed, AtomFeed, JsonFeed, RdfFeed, RssFeed } from "feedsmith";
import { decodeFeedBody } from "./document-text.js";
import { declaresEntities } from "./entity-declarations.js";
import { feedDateToIso } from "./feed-dates.js";
import { htmlToText, singleLine, textToPlainText } from "./plain-text.js";
import { FeedDocumentError } from "./document-error.js";

export { FeedDocumentError, type FeedDocumentFailure } from "./document-error.js";

type FeedFormat = "rss" | "atom" | "rdf" | "json";

/**
 * One item of a feed, the same whatever the dialect. Strings are as the feed has them (entities of
 * the XML decoded), bounded in length; none is ever empty.
 */
export interface FeedItem {
  /** RSS `guid`, Atom `id`, RDF `rdf:about`, JSON Feed `id`. */
  guid?: string;
  /** The item's page: an absolute http(s) URL (relative ones resolved against `baseUrl`). */
  link?: string;
  /** The title as plain text (plain-text.ts), one line. */
  title?: string;
  /** When the item was published (else updated), as `YYYY-MM-DDTHH:MM:SSZ`; absent when unreadable. */
  published?: string;
  /** The richest body the item has, when it is HTML (RSS description, content:encoded, Atom html…). */
  summaryHtml?: string;
  /** The richest body, when the feed declares it plain text (JSON Feed content_text, Atom type="text"). */
  contentText?: string;
}

export interface ParsedFeed {
  format: FeedFormat;
  /** The feed's title as plain text, one line. */
  title?: string;
  /** In document order, at most `maxItems`. */
  items: FeedItem[];
}

export interface ParseFeedOptions {
  /** The URL the document was fetched from: relative item links are resolved against it. */
  baseUrl?: string;
  /** At most this many items are read, the first in the document (default and ceiling MAX_FEED_ITEMS). */
  maxItems?: number;
}

export const MAX_FEED_ITEMS = 500;

/** Bounds on what one item keeps, in UTF-16 code units; a body longer than any summary shown is cut. */
const MAX_CHARS = { title: 300, guid: 4096, link: 4096, body: 256 * 1024 };

/**
 * A fetched feed document (RSS 0.9x/1.0/2.0, Atom 0.3/1.0, JSON Feed 1.0/1.1) as its items.
 * Pure: no network, no store. Throws only FeedDocumentError. The work is linear in the body's size
 * (the fetcher caps it at 5 MiB): entities are never expanded, nesting is capped by the parser.
 */
export function parseFeedDocument(body: string | Uint8Array, contentType?: string, options: ParseFeedOptions = {}): ParsedFeed {
  const text = decodeFeedBody(body, contentType);
  if (text.trim() === "") throw new FeedDocumentError("not-a-feed", "the document is empty");
  if (declaresEntities(text)) throw new FeedDocumentError("refused", "the document declares XML entities");
  const maxItems = Math.max(0, Math.min(options.maxItems ?? MAX_FEED_ITEMS, MAX_FEED_ITEMS));
  const parsed = parseWithFeedsmith(jsonOrText(text), maxItems);
  const base = options.baseUrl;
  if (parsed.feed === undefined) return { format: parsed.format, items: [] };
  switch (parsed.format) {
    case "rss":
      return finish("rss", parsed.feed.title, (parsed.feed.items ?? []).map((item) => rssItem(item, base)), maxItems);
    case "atom":
      return finish("atom", parsed.feed.title?.value, (parsed.feed.entries ?? []).map((entry) => atomEntry(entry, base)), maxItems);
    case "rdf":
      return finish("rdf", parsed.feed.title, (parsed.feed.items ?? []).map((item) => rdfItem(item, base)), maxItems);
    case "json":
      return finish("json", parsed.feed.title, (parsed.feed.items ?? []).map((item) => jsonItem(item, base)), maxItems);
  }
}

/** JSON is parsed here, so broken JSON is `malformed` rather than feedsmith's "not a feed". */
function jsonOrText(text: string): string | object {
  if (!text.trimStart().startsWith("{")) return text;
  try {
    return JSON.parse(text) as object;
  } catch (error) {
    throw new FeedDocumentError("malformed", "the JSON does not parse", { cause: error });
  }
}

function parseWithFeedsmith(value: string | object, maxItems: number): AnyFeed | { format: FeedFormat; feed: undefined } {
  try {
    return parseFeed(value, { maxItems });
  } catch (error) {
    if (error instanceof DetectError) throw new FeedDocumentError("not-a-feed", "the document is not an RSS, Atom or JSON feed", { cause: error });
    // ParseError: the document parses as its dialect but holds nothing feedsmith recognises (an
    // `<rss>` without a channel, an Atom feed of unknown elements): a feed without items.
    const format = error instanceof ParseError ? detectedFormat(value) : undefined;
    if (format !== undefined) return { format, feed: undefined };
    // MalformedError, and whatever else a parser throws (a RangeError included).
    throw new FeedDocumentError("malformed", "the feed does not parse", { cause: error });
  }
}

/** The dialect feedsmith's parseFeed recognised, asked in the order it asks. */
function detectedFormat(value: string | object): FeedFormat | undefined {
  if (detectRssFeed(value)) return "rss";
  if (detectAtomFeed(value)) return "atom";
  if (detectRdfFeed(value)) return "rdf";
  if (detectJsonFeed(value)) return "json";
  return undefined;
}

function finish(format: FeedFormat, rawTitle: string | undefined, items: FeedItem[], maxItems: number): ParsedFeed {
  const title = plainTitle({ value: rawTitle });
  return { format, ...(title === "" ? {} : { title }), items: items.slice(0, maxItems) };
}

/** A body candidate: its text and whether the feed declares it plain text. */
interface Body {
  value: string | undefined;
  plain?: boolean;
}

function rssItem(item: RssFeed.Item<string>, base: string | undefined): FeedItem {
  const guid = item.guid?.value;
  // RSS 2.0: a guid is a permalink unless it says otherwise.
  const permalink = item.guid?.isPermaLink !== false ? guid : undefined;
  return makeItem({
    guid,
    links: [item.link, ...atomLinks(item.atom?.links), permalink],
    title: { value: item.title ?? item.dc?.titles?.[0] },
    dates: [item.pubDate, item.dc?.dates?.[0], item.dcterms?.issued?.[0], item.dcterms?.created?.[0], item.atom?.published, item.atom?.updated, item.dcterms?.modified?.[0]],
    bodies: [{ value: item.content?.encoded }, atomContent(item.atom?.content), { value: item.description }, atomText(item.atom?.summary), { value: item.dc?.descriptions?.[0] }],
    base,
  });
}

function atomEntry(entry: AtomFeed.Entry<string>, base: string | undefined): FeedItem {
  return makeItem({
    guid: entry.id,
    links: atomLinks(entry.links),
    title: atomText(entry.title),
    dates: [entry.published, entry.dc?.dates?.[0], entry.dcterms?.issued?.[0], entry.updated, entry.dcterms?.modified?.[0]],
    bodies: [atomContent(entry.content), atomText(entry.summary), { value: entry.dc?.descriptions?.[0] }],
    base,
  });
}

function rdfItem(item: RdfFeed.Item<string>, base: string | undefined): FeedItem {
  return makeItem({
    guid: item.rdf?.about,
    links: [item.link, item.rdf?.about],
    title: { value: item.title ?? item.dc?.titles?.[0] },
    dates: [item.dc?.dates?.[0], item.dcterms?.issued?.[0], item.dcterms?.created?.[0], item.atom?.published, item.atom?.updated, item.dcterms?.modified?.[0]],
    bodies: [{ value: item.content?.encoded }, { value: item.description }, { value: item.dc?.descriptions?.[0] }],
    base,
  });
}

function jsonItem(item: JsonFeed.Item<string>, base: string | undefined): FeedItem {
  return makeItem({
    guid: item.id,
    links: [item.url, item.external_url],
    // JSON Feed titles are plain text, so a title about `<template>` keeps its words.
    title: { value: item.title, plain: true },
    dates: [item.date_published, item.date_modified],
    bodies: [{ value: item.content_html }, { value: item.content_text, plain: true }, { value: item.summary, plain: true }],
    base,
  });
}

function atomLinks(links: Array<AtomFeed.Link<string>> | undefined): Array<string | undefined> {
  if (!links) return [];
  // The page of the item is its `alternate` link (the default relation); others follow as fallbacks.
  const alternate = links.filter((link) => link.rel === undefined || link.rel === "alternate");
  const preferred = [...alternate.filter((link) => link.type === undefined || /html/i.test(link.type)), ...alternate];
  return preferred.map((link) => link.href);
}

/** Atom text constructs: `text` (the default in 1.0) and `text/plain` are plain, the rest markup. */
function atomText(text: AtomFeed.Text | undefined): Body {
  const type = text?.type?.toLowerCase();
  return { value: text?.value, plain: type === "text" || type === "text/plain" };
}

function atomContent(content: AtomFeed.Content | undefined): Body {
  const type = content?.type?.toLowerCase();
  return { value: content?.value, plain: type === "text" || type === "text/plain" };
}

interface ItemParts {
  guid: string | undefined;
  links: Array<string | undefined>;
  title: Body;
  dates: Array<string | undefined>;
  bodies: Body[];
  base: string | undefined;
}

function makeItem(parts: ItemParts): FeedItem {
  const item: FeedItem = {};
  const guid = present(parts.guid, MAX_CHARS.guid);
  if (guid !== undefined) item.guid = guid;
  const link = parts.links.map((candidate) => httpUrl(candidate, parts.base)).find((url) => url !== undefined);
  if (link !== undefined) item.link = link;
  const title = plainTitle(parts.title);
  if (title !== "") item.title = title;
  const published = parts.dates.map((date) => feedDateToIso(date)).find((date) => date !== undefined);
  if (published !== undefined) item.published = published;
  const body = richest(parts.bodies);
  if (body?.plain) item.contentText = body.value;
  else if (body) item.summaryHtml = body.value;
  return item;
}

/**
 * The body with the most to say: the longest, the earlier in the list winning a tie (the lists put
 * full content before summaries).
 */
function richest(bodies: Body[]): { value: string; plain: boolean } | undefined {
  let best: { value: string; plain: boolean } | undefined;
  for (const body of bodies) {
    const value = present(body.value, MAX_CHARS.body);
    if (value !== undefined && (best === undefined || value.length > best.value.length)) best = { value, plain: body.plain === true };
  }
  return best;
}

function plainTitle(title: Body): string {
  const value = present(title.value, MAX_CHARS.body);
  if (value === undefined) return "";
  return singleLine(title.plain ? textToPlainText(value, MAX_CHARS.title) : htmlToText(value, MAX_CHARS.title));
}

function present(value: string | undefined, maxChars: number): string | undefined {
  if (typeof value !== "string") return undefined;
  const trimmed = value.trim();
  return trimmed === "" ? undefined : trimmed.slice(0, maxChars);
}

/**
 * An absolute http(s) URL as the WHATWG serializer writes it (no white space, `<`, `>` or `"`), or
 * undefined: no other scheme is ever offered as an item's page.
 */
export function httpUrl(candidate: string | undefined, base: string | undefined): string | undefined {
  const text = present(candidate, MAX_CHARS.link);
  if (text === undefined) return undefined;
  let url: URL;
  try {
    url = base === undefined ? new URL(text) : new URL(text, base);
  } catch {
    return undefined;
  }
  if (url.protocol !== "http:" && url.protocol !== "https:") return undefined;
  return url.href.length > MAX_CHARS.link ? undefined : url.href;
}
