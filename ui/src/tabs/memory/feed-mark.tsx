// What a feed's entry says about where it came from (CONTRACT §15): the subscription that brought it
// (a link to it in the Feeds tab) and the item itself on the web, when the item had a link.

import { FeedIcon } from "../../components/feed-icon.js";
import type { MemoryEntry } from "../../../../src/wire/memory.js";

/** Only web addresses become links: a feed is written by someone else, and may carry anything. */
const webAddress = (url: string | null): URL | undefined => {
  if (url === null || !/^https?:\/\//i.test(url)) return undefined;
  try {
    return new URL(url);
  } catch {
    return undefined;
  }
};

export function FeedMark({ entry, feedName }: { entry: Pick<MemoryEntry, "source">; feedName: string | undefined }) {
  const source = entry.source;
  if (source?.kind !== "feed") return null;
  const item = webAddress(source.url);
  return (
    <p class="feed-mark small" data-feed-id={source.feed_id}>
      <FeedIcon />
      <span>
        <span class="muted">from feed </span>
        <a href={`#/feeds/${source.feed_id}`} class="feed-mark-name">
          {feedName ?? "a subscription"}
        </a>
        {item && (
          <>
            <span class="muted"> · </span>
            <a href={item.href} target="_blank" rel="noopener noreferrer" class="feed-mark-item" title={item.href}>
              read it on {item.host}
              <span class="visually-hidden"> (opens in a new tab)</span>
            </a>
          </>
        )}
      </span>
    </p>
  );
}
