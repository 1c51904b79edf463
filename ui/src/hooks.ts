// State hooks shared by the tabs: one-shot loads, paged lists with "Load more", and refreshes
// driven by the live event stream.

import { useCallback, useEffect, useRef, useState } from "preact/hooks";
import type { ApiResponse } from "./api.js";
import { liveStream, typeMatches } from "./live.js";

export interface Loaded<T> {
  data: T | undefined;
  error: unknown;
  loading: boolean;
  /** Fetches again; what is shown stays until the answer arrives. */
  reload: () => void;
}

/**
 * Runs `loader` when `deps` change; a newer run wins over an older one still in flight. With
 * `initial`, that is the data until the first change or reload, and the mount fetches nothing.
 */
export function useLoad<T>(loader: () => Promise<T>, deps: readonly unknown[], initial?: T): Loaded<T> {
  const [state, setState] = useState<{ data: T | undefined; error: unknown; loading: boolean }>(() => ({ data: initial, error: undefined, loading: initial === undefined }));
  const skipMount = useRef(initial !== undefined);
  const generation = useRef(0);
  const loaderRef = useRef(loader);
  loaderRef.current = loader;

  const run = useCallback((background: boolean) => {
    const mine = ++generation.current;
    if (!background) setState((previous) => ({ ...previous, loading: true }));
    loaderRef.current().then(
      (data) => {
        if (mine === generation.current) setState({ data, error: undefined, loading: false });
      },
      (error: unknown) => {
        if (mine === generation.current) setState((previous) => ({ data: previous.data, error, loading: false }));
      },
    );
  }, []);

  useEffect(() => {
    if (skipMount.current) {
      skipMount.current = false;
      return;
    }
    setState({ data: undefined, error: undefined, loading: true });
    run(false);
    // The caller names the dependencies, as with useEffect.
  }, deps);

  return { ...state, reload: useCallback(() => run(true), [run]) };
}

export type PageLoader<T> = (cursor: string | undefined, limit: number) => Promise<ApiResponse<T[]>>;

export interface Paged<T> {
  items: T[];
  error: unknown;
  /** The first page has not arrived yet. */
  loading: boolean;
  loadingMore: boolean;
  hasMore: boolean;
  loadMore: () => void;
  /** Fetches the rows shown so far again (at least one page). */
  refresh: () => void;
  /** Replaces one row in place, e.g. with the answer to an action on it. */
  replace: (predicate: (item: T) => boolean, next: T | undefined) => void;
}

const MAX_PAGE = 500;

/** A list paged with the API's cursors; `refresh` re-reads as many rows as are shown. */
export function usePaged<T>(loadPage: PageLoader<T>, deps: readonly unknown[], pageSize = 50): Paged<T> {
  const [items, setItems] = useState<T[]>([]);
  const [cursor, setCursor] = useState<string | undefined>(undefined);
  const [error, setError] = useState<unknown>(undefined);
  const [loading, setLoading] = useState(true);
  const [loadingMore, setLoadingMore] = useState(false);
  const generation = useRef(0);
  const loaderRef = useRef(loadPage);
  loaderRef.current = loadPage;
  const shown = useRef(0);
  shown.current = items.length;
  // How many rows the user has asked for: a refresh that overtakes a "Load more" still in flight
  // reads them all, so a live event never takes back the page the user just asked for.
  const wanted = useRef(pageSize);
  // The generation of the read in flight, if any (0: none).
  const reading = useRef(0);

  const readFromStart = useCallback(
    async (count: number, mine: number) => {
      const rows: T[] = [];
      let next: string | undefined;
      do {
        const page = await loaderRef.current(next, Math.min(MAX_PAGE, Math.max(1, count - rows.length)));
        if (mine !== generation.current) return;
        rows.push(...page.data);
        next = page.nextCursor ?? undefined;
      } while (next !== undefined && rows.length < count);
      setItems(rows);
      setCursor(next);
      setError(undefined);
    },
    [],
  );

  const load = useCallback(
    (count: number, background: boolean) => {
      const mine = ++generation.current;
      reading.current = mine;
      if (!background) setLoading(true);
      readFromStart(count, mine)
        .catch((failure: unknown) => {
          if (mine === generation.current) setError(failure);
        })
        .finally(() => {
          if (mine === generation.current) {
            reading.current = 0;
            setLoading(false);
            setLoadingMore(false);
          }
        });
    },
    [readFromStart],
  );

  useEffect(() => {
    setItems([]);
    setCursor(undefined);
    setError(undefined);
    wanted.current = pageSize;
    load(pageSize, false);
    // The caller names the dependencies, as with useEffect.
  }, deps);

  const loadMore = useCallback(() => {
    if (cursor === undefined) return;
    wanted.current = shown.current + pageSize;
    const mine = ++generation.current;
    reading.current = mine;
    setLoadingMore(true);
    loaderRef
      .current(cursor, pageSize)
      .then((page) => {
        if (mine !== generation.current) return;
        setItems((previous) => [...previous, ...page.data]);
        setCursor(page.nextCursor ?? undefined);
        setError(undefined);
      })
      .catch((failure: unknown) => {
        if (mine === generation.current) setError(failure);
      })
      .finally(() => {
        if (mine === generation.current) {
          reading.current = 0;
          setLoadingMore(false);
        }
      });
  }, [cursor, pageSize]);

  const refresh = useCallback(() => load(Math.max(pageSize, shown.current, wanted.current), true), [load, pageSize]);

  const replace = useCallback(
    (predicate: (item: T) => boolean, next: T | undefined) => {
      setItems((previous) => {
        const updated: T[] = [];
        for (const item of previous) {
          if (!predicate(item)) updated.push(item);
          else if (next !== undefined) updated.push(next);
        }
        return updated;
      });
      // A read in flight may have begun before the change this shows (a live event's refresh just
      // before a save): its rows would put the old item back. It is read again, after the change.
      if (reading.current !== 0) refresh();
    },
    [refresh],
  );

  return { items, error, loading, loadingMore, hasMore: cursor !== undefined, loadMore, refresh, replace };
}

/**
 * Calls `refresh` (debounced) whenever the live stream brings an event of one of `types` (exact,
 * or families like `task.*`; empty: any), and after a stream reset.
 */
export function useLiveRefresh(types: readonly string[], refresh: () => void, delayMs = 350): void {
  const refreshRef = useRef(refresh);
  refreshRef.current = refresh;
  const key = types.join(",");
  useEffect(() => {
    const patterns = key ? key.split(",") : [];
    let timer: ReturnType<typeof setTimeout> | undefined;
    const unsubscribe = liveStream.subscribe((signal) => {
      if (signal.kind === "event" && patterns.length > 0 && !typeMatches(signal.event.type, patterns)) return;
      clearTimeout(timer);
      timer = setTimeout(() => refreshRef.current(), delayMs);
    });
    return () => {
      clearTimeout(timer);
      unsubscribe();
    };
  }, [key, delayMs]);
}

/** The current time, updated every `intervalMs`, for relative times that stay true. */
export function useNow(intervalMs = 30_000): number {
  const [now, setNow] = useState(() => Date.now());
  useEffect(() => {
    const timer = setInterval(() => setNow(Date.now()), intervalMs);
    return () => clearInterval(timer);
  }, [intervalMs]);
  return now;
}

/** A value that follows `value` once it has stopped changing for `delayMs`. */
export function useDebounced<T>(value: T, delayMs: number): T {
  const [settled, setSettled] = useState(value);
  useEffect(() => {
    const timer = setTimeout(() => setSettled(value), delayMs);
    return () => clearTimeout(timer);
  }, [value, delayMs]);
  return settled;
}

/** The width of the element, following resizes. */
export function useWidth(): [(element: HTMLDivElement | null) => void, number] {
  const [element, setElement] = useState<HTMLDivElement | null>(null);
  const [width, setWidth] = useState(0);
  useEffect(() => {
    if (!element) return undefined;
    setWidth(element.clientWidth);
    const observer = new ResizeObserver(() => setWidth(element.clientWidth));
    observer.observe(element);
    return () => observer.disconnect();
  }, [element]);
  return [setElement, width];
}
