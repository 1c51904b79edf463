// The names of the feeds that entries on screen came from, read once each (and again when a feed is
// renamed), so that a feed's entry says which subscription brought it.

import { useEffect, useRef, useState } from "preact/hooks";
import { api, encode } from "../../api.js";
import { liveStream } from "../../live.js";
import type { Feed } from "../../../../src/wire/feeds.js";
import type { MemoryEntry } from "../../../../src/wire/memory.js";

/** The feed an entry came from, or undefined for any other entry. */
export const feedIdOf = (entry: Pick<MemoryEntry, "source">): string | undefined => (entry.source?.kind === "feed" ? entry.source.feed_id : undefined);

/** Names of the feeds of `entries` as they arrive; a feed that cannot be read (unsubscribed since) stays out. */
export function useFeedNames(entries: readonly Pick<MemoryEntry, "source">[]): ReadonlyMap<string, string> {
  const [names, setNames] = useState<ReadonlyMap<string, string>>(new Map());
  const asked = useRef(new Set<string>());
  const mounted = useRef(true);
  useEffect(
    () => () => {
      mounted.current = false;
    },
    [],
  );
  const read = (id: string) => {
    asked.current.add(id);
    api.get<Feed>(`/feeds/${encode(id)}`).then(
      (response) => {
        if (mounted.current) setNames((current) => new Map(current).set(id, response.data.name));
      },
      () => {
        // Then the mark names no feed; the entry still says it came from one.
      },
    );
  };
  const key = [...new Set(entries.map(feedIdOf).filter((id): id is string => id !== undefined))].sort().join(",");
  useEffect(() => {
    for (const id of key ? key.split(",") : []) if (!asked.current.has(id)) read(id);
  }, [key]);
  useEffect(
    () =>
      liveStream.subscribe((signal) => {
        if (signal.kind !== "event" || signal.event.type !== "feed.updated") return;
        const id = signal.event.payload.feed_id;
        if (typeof id === "string" && asked.current.has(id)) read(id);
      }),
    [],
  );
  return names;
}
