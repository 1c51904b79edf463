import { feedDateToIso } from "./feed-dates.js";
import { itemEntry } from "./item-entry.js";
import type { FeedItem } from "./parse.js";

/** An item ready to become an entry: its key, its content, its link. */
export interface ReadyItem {
  key: string;
  /** Null when the item has nothing to remember (no title, summary or link): it is only marked seen. */
  content: string | null;
  link: string | null;
}

/**
 * A document's items, newest first, each key once: by date when every item has one, else in the
 * document's order (which feeds keep newest first).
 */
export function newestItems(items: readonly FeedItem[], maxContentBytes: number): ReadyItem[] {
  const dated = items.map((item, index) => ({ item, index, at: feedDateToIso(item.published) }));
  if (dated.every((entry) => entry.at !== undefined)) {
    dated.sort((a, b) => (a.at === b.at ? a.index - b.index : (a.at as string) < (b.at as string) ? 1 : -1));
  }
  const seen = new Set<string>();
  const ready: ReadyItem[] = [];
  for (const { item } of dated) {
    const entry = itemEntry(item, maxContentBytes);
    if (seen.has(entry.key)) continue;
    seen.add(entry.key);
    ready.push({ key: entry.key, content: entry.content, link: item.link ?? null });
  }
  return ready;
}
