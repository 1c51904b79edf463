import { createHash } from "node:crypto";
import { feedDateToIso } from "./feed-dates.js";
import { httpUrl, type FeedItem } from "./parse.js";
import { htmlToText, singleLine, textToPlainText } from "./plain-text.js";

/** CONTRACT §15: the summary part of an item's entry is at most this many characters. */
export const SUMMARY_MAX_CHARS = 2000;

/** Titles are one line of at most this many characters. */
const TITLE_MAX_CHARS = 300;

/** A guid or link longer than this is kept as its hash, so keys stay index-sized. */
export const MAX_ITEM_KEY_CHARS = 256;

type ItemKeyKind = "guid" | "link" | "hash";

/** How an item is recognised from one poll to the next (CONTRACT §15). */
export interface ItemKey {
  /** The guid, the link, or `sha256:<hex>`; at most MAX_ITEM_KEY_CHARS characters. */
  key: string;
  /** What the key was made from; a guid or link too long to keep is hashed and keeps its kind. */
  kind: ItemKeyKind;
}

export interface ItemEntry extends ItemKey {
  /** The entry's content, or null when the item has no title, summary or link: nothing to remember. */
  content: string | null;
}

const sha256 = (text: string): string => `sha256:${createHash("sha256").update(text, "utf8").digest("hex")}`;

const bounded = (text: string): string => (text.length > MAX_ITEM_KEY_CHARS ? sha256(text) : text);

/**
 * The item's key: its guid, else its link, else a hash of its title and date. An item with neither
 * title nor date would hash like every other such item, so its summary joins the hash.
 */
export function itemKey(item: FeedItem): ItemKey {
  if (item.guid !== undefined && item.guid.trim() !== "") return { key: bounded(item.guid.trim()), kind: "guid" };
  if (item.link !== undefined && item.link.trim() !== "") return { key: bounded(item.link.trim()), kind: "link" };
  const title = itemTitle(item);
  const published = feedDateToIso(item.published) ?? "";
  const parts = title === "" && published === "" ? [title, published, itemSummary(item)] : [title, published];
  return { key: sha256(JSON.stringify(parts)), kind: "hash" };
}

/** The item's title as one line of plain text, "" when it has none. */
function itemTitle(item: FeedItem): string {
  return item.title === undefined ? "" : singleLine(textToPlainText(item.title, TITLE_MAX_CHARS));
}

/** The item's body as plain text of at most SUMMARY_MAX_CHARS characters, "" when it has none. */
export function itemSummary(item: FeedItem): string {
  if (item.summaryHtml !== undefined) return htmlToText(item.summaryHtml, SUMMARY_MAX_CHARS);
  if (item.contentText !== undefined) return textToPlainText(item.contentText, SUMMARY_MAX_CHARS);
  return "";
}

/**
 * The entry an item becomes, its content laid out as CONTRACT §15 says:
 * `## <title>\n<published>\n\n<summary>\n\nSource: <link>`. A missing part is left out with its
 * line (no empty heading, no "undefined"); a summary that would take the content past
 * `maxContentBytes` (the server's MAX_CONTENT_BYTES) is shortened, and if the rest alone is too
 * long, the content is cut.
 */
export function itemEntry(item: FeedItem, maxContentBytes: number): ItemEntry {
  const key = itemKey(item);
  const title = itemTitle(item);
  const link = item.link === undefined ? undefined : httpUrl(item.link, undefined);
  const summary = itemSummary(item);
  const published = feedDateToIso(item.published);
  if (title === "" && summary === "" && link === undefined) return { ...key, content: null };
  const layout = (body: string): string => {
    const heading = [title === "" ? undefined : `## ${title}`, published].filter((line) => line !== undefined).join("\n");
    return [heading, body, link === undefined ? "" : `Source: ${link}`].filter((block) => block !== "").join("\n\n");
  };
  let content = layout(summary);
  const overflow = Buffer.byteLength(content, "utf8") - maxContentBytes;
  if (overflow > 0 && summary !== "") {
    const room = Buffer.byteLength(summary, "utf8") - overflow - Buffer.byteLength("…", "utf8");
    content = layout(room > 0 ? `${cutToBytes(summary, room).trimEnd()}…` : "");
  }
  return { ...key, content: cutToBytes(content, maxContentBytes) };
}

/** The longest prefix of `text` within `maxBytes` of UTF-8, never half a character. */
function cutToBytes(text: string, maxBytes: number): string {
  if (Buffer.byteLength(text, "utf8") <= maxBytes) return text;
  let bytes = 0;
  let end = 0;
  for (const character of text) {
    const size = Buffer.byteLength(character, "utf8");
    if (bytes + size > maxBytes) break;
    bytes += size;
    end += character.length;
  }
  return text.slice(0, end);
}
