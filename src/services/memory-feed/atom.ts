import type { FeedEntry } from "./items.js";
import type { FeedPageView } from "./json-feed.js";
import { xmlAttribute, xmlText } from "./xml.js";

const ATOM = "http://www.w3.org/2005/Atom";
/** RFC 6721: a deleted entry is announced by `<at:deleted-entry ref="…" when="…"/>`. */
const TOMBSTONES = "http://purl.org/atompub/tombstones/1.0";
/** An empty feed still needs an `updated`; this one moves nothing a reader compares. */
const NEVER = "1970-01-01T00:00:00.000Z";

export interface AtomView extends FeedPageView {
  /** The feed's own `urn:uuid:` id, the same for every page of the same selection. */
  feedId: string;
  homeUrl: string;
}

const urn = (id: string): string => `urn:uuid:${id}`;

function entryXml(entry: FeedEntry): string {
  if (entry.deletedAt !== null) return `  <at:deleted-entry ref="${xmlAttribute(urn(entry.id))}" when="${xmlAttribute(entry.deletedAt)}"/>`;
  return [
    "  <entry>",
    `    <id>${xmlText(urn(entry.id))}</id>`,
    `    <title type="text">${xmlText(entry.title ?? "")}</title>`,
    `    <published>${xmlText(entry.published)}</published>`,
    `    <updated>${xmlText(entry.modified)}</updated>`,
    `    <author><name>${xmlText(entry.author)}</name></author>`,
    `    <link rel="alternate" href="${xmlAttribute(entry.url)}"/>`,
    ...entry.tags.map((tag) => `    <category term="${xmlAttribute(tag)}"/>`),
    `    <content type="text">${xmlText(entry.content ?? "")}</content>`,
    "  </entry>",
  ].join("\n");
}

/**
 * A page as an Atom 1.0 document: plain text only (`type="text"`, never html, so no reader renders
 * an entry's markup), `urn:uuid:` ids, one category per tag, and tombstones as RFC 6721 deleted
 * entries.
 */
export function atomOf(view: AtomView): string {
  const updated = view.entries.reduce((latest, entry) => (entry.modified > latest ? entry.modified : latest), NEVER);
  return [
    '<?xml version="1.0" encoding="utf-8"?>',
    `<feed xmlns="${ATOM}" xmlns:at="${TOMBSTONES}">`,
    `  <id>${xmlText(urn(view.feedId))}</id>`,
    `  <title type="text">${xmlText(view.title)}</title>`,
    `  <updated>${xmlText(updated)}</updated>`,
    "  <generator>Cairn</generator>",
    `  <link rel="self" type="application/atom+xml" href="${xmlAttribute(view.feedUrl)}"/>`,
    `  <link rel="alternate" href="${xmlAttribute(view.homeUrl)}"/>`,
    ...(view.nextUrl === null ? [] : [`  <link rel="next" type="application/atom+xml" href="${xmlAttribute(view.nextUrl)}"/>`]),
    ...view.entries.map(entryXml),
    "</feed>",
    "",
  ].join("\n");
}
