import { JSON_FEED_VERSION, type JsonFeed, type JsonFeedItem } from "../../wire/memory-feed.js";
import type { FeedEntry, FeedSite } from "./items.js";

export interface FeedPageView {
  title: string;
  /** This feed's URL without paging or credentials; the next page's, when there is one. */
  feedUrl: string;
  nextUrl: string | null;
  entries: FeedEntry[];
  maxChangeSeq: number;
}

function itemOf(entry: FeedEntry): JsonFeedItem {
  return {
    id: entry.id,
    url: entry.url,
    ...(entry.title === null ? {} : { title: entry.title }),
    // JSON Feed wants content on every item: a tombstone's is empty.
    content_text: entry.content ?? "",
    date_published: entry.published,
    date_modified: entry.modified,
    authors: [{ name: entry.author }],
    ...(entry.deletedAt === null ? { tags: entry.tags } : {}),
    _cairn: entry.fields,
  };
}

/** A page as JSON Feed 1.1, with the instance and its newest change under `_cairn`. */
export function jsonFeedOf(page: FeedPageView, site: FeedSite): JsonFeed {
  return {
    version: JSON_FEED_VERSION,
    title: page.title,
    home_page_url: site.url,
    feed_url: page.feedUrl,
    ...(page.nextUrl === null ? {} : { next_url: page.nextUrl }),
    items: page.entries.map(itemOf),
    _cairn: { instance_id: site.instanceId, instance_name: site.instanceName, max_change_seq: page.maxChangeSeq },
  };
}
