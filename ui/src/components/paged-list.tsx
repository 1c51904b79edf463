// The frame of every paged list: its first load, its error, its empty state and "Load more".

import type { ComponentChildren } from "preact";
import type { Paged } from "../hooks.js";
import { Empty, ErrorNote, Loading } from "./feedback.js";

interface PagedListProps<T> {
  paged: Paged<T>;
  empty: ComponentChildren;
  children: (items: T[]) => ComponentChildren;
  /** Rows shown instead of `paged.items` (e.g. after a client-side filter). */
  visible?: T[];
}

export function PagedList<T>({ paged, empty, children, visible }: PagedListProps<T>) {
  const items = visible ?? paged.items;
  if (paged.loading && paged.items.length === 0) return <Loading />;
  if (paged.error !== undefined && paged.items.length === 0) return <ErrorNote error={paged.error} onRetry={paged.refresh} />;
  return (
    <>
      {items.length === 0 && !paged.hasMore ? <Empty>{empty}</Empty> : children(items)}
      {paged.error !== undefined && paged.items.length > 0 && <ErrorNote error={paged.error} onRetry={paged.refresh} />}
      {paged.hasMore && (
        <div class="load-more">
          <button type="button" onClick={paged.loadMore} disabled={paged.loadingMore}>
            {paged.loadingMore ? "Loading…" : "Load more"}
          </button>
        </div>
      )}
    </>
  );
}
