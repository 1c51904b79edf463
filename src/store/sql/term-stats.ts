// Corpus statistics for BM25's idf: how many entries the keyword index holds and how many hold each
// word. Counting is O(matches) on both backends; once the index is large a team asks about the same
// words again and again, so each count is then reused until it is a minute old (idf moves slowly
// with a large corpus: a minute's drift changes no ranking anyone could notice). A small index is
// counted on every search: it is cheap there, and a few writes change its statistics a lot. Where
// "large" starts is the backend's (`cacheFrom`): FTS5 counts from its doclists alone, PostgreSQL
// visits the table's rows for each count.
//
// With `refresh: "background"` a large index's count that has aged past the minute is still
// answered at once, and counted again beside the search, for the searches after it: no search
// waits on a count it already has. Only a word never counted (or forgotten) is counted on the
// request. A background count that fails leaves the old one in place, to be tried again later.
// A word no entry held is never reused: both backends leave a word with no entries out of the
// candidates, so an entry written with it since would go unfound until the count was redone (and
// counting a word the index does not hold is cheap).
// Each count is told whether it runs after the search (`later`): the caller's reader may be a
// transaction that has ended by then.

const TTL_MS = 60_000;
const MAX_WORDS = 10_000;
/** From this many entries on, counts are reused for a minute (unless a backend says otherwise). */
export const TERM_STATS_CACHE_FROM = 10_000;

export interface CorpusSize {
  documents: number;
  averageLength: number;
}

export interface TermStatsOptions {
  /** "request" (default): a stale count is counted again before the search goes on; "background": after it. */
  refresh?: "request" | "background";
  /** From this many entries on, counts are reused for a minute; TERM_STATS_CACHE_FROM by default. */
  cacheFrom?: number;
  /** The clock (epoch ms), for tests. */
  now?: () => number;
}

export class TermStats {
  private corpus: (CorpusSize & { at: number }) | undefined;
  private readonly words = new Map<string, { documents: number; at: number }>();
  private readonly background: boolean;
  private readonly now: () => number;
  private readonly cacheFrom: number;
  /** What is being counted in the background: never twice at once. */
  private corpusRefresh: Promise<void> | undefined;
  private readonly wordRefreshes = new Set<string>();

  constructor(options: TermStatsOptions = {}) {
    this.background = options.refresh === "background";
    this.now = options.now ?? Date.now;
    this.cacheFrom = options.cacheFrom ?? TERM_STATS_CACHE_FROM;
  }

  async corpusSize(count: (later: boolean) => Promise<CorpusSize>): Promise<CorpusSize> {
    const nowMs = this.now();
    const known = this.corpus;
    if (known && known.documents >= this.cacheFrom) {
      if (nowMs - known.at < TTL_MS) return known;
      if (this.background) {
        this.corpusRefresh ??= count(true)
          .then((value) => {
            this.corpus = { ...value, at: this.now() };
          })
          .catch(() => undefined)
          .finally(() => {
            this.corpusRefresh = undefined;
          });
        return known;
      }
    }
    const value = await count(false);
    this.corpus = { ...value, at: nowMs };
    return value;
  }

  /**
   * How many entries hold each word, counting (with `count`) those not known for a minute. Words
   * are counted concurrently: on PostgreSQL each count has a connection of its own.
   */
  async frequencies(corpusDocuments: number, words: string[], count: (word: string, later: boolean) => Promise<number>): Promise<Map<string, number>> {
    const nowMs = this.now();
    const cache = corpusDocuments >= this.cacheFrom;
    const result = new Map<string, number>();
    const counting: Promise<void>[] = [];
    for (const word of words) {
      const known = cache ? this.words.get(word) : undefined;
      if (known && nowMs - known.at < TTL_MS) {
        result.set(word, known.documents);
        continue;
      }
      if (known && this.background) {
        result.set(word, known.documents);
        this.refreshWord(word, count);
        continue;
      }
      // Set now, so the map keeps the words' order; the count fills it in.
      result.set(word, 0);
      counting.push(
        count(word, false).then((documents) => {
          result.set(word, documents);
          if (cache) this.remember(word, documents, nowMs);
        }),
      );
    }
    await Promise.all(counting);
    return result;
  }

  private refreshWord(word: string, count: (word: string, later: boolean) => Promise<number>): void {
    if (this.wordRefreshes.has(word)) return;
    this.wordRefreshes.add(word);
    void count(word, true)
      .then((documents) => this.remember(word, documents, this.now()))
      .catch(() => undefined)
      .finally(() => this.wordRefreshes.delete(word));
  }

  private remember(word: string, documents: number, at: number): void {
    // Oldest first out: a Map iterates in insertion order, and a refreshed word is re-inserted.
    this.words.delete(word);
    if (documents === 0) return;
    if (this.words.size >= MAX_WORDS) this.words.delete(this.words.keys().next().value as string);
    this.words.set(word, { documents, at });
  }
}

/**
 * Keyword search scores at most this many candidates: the entries holding the query's rarest
 * terms, taken rarest first while their document frequencies add up to at most this (always at
 * least the rarest one). The common terms still score on those candidates; an entry holding only
 * common ones would rank low anyway (low idf). Ranking every match of a common word instead cost
 * tens of milliseconds at 100,000 entries (docs/search.md "At scale").
 */
export const MAX_KEYWORD_CANDIDATES = 1_000;

/** The rarest terms (of those any entry holds) whose postings add up to at most MAX_KEYWORD_CANDIDATES, rarest first. */
export function selectiveTerms(frequencies: Map<string, number>): string[] {
  const chosen: string[] = [];
  let postings = 0;
  for (const [term, documents] of [...frequencies].filter(([, documents]) => documents > 0).sort((a, b) => a[1] - b[1])) {
    if (chosen.length > 0 && postings + documents > MAX_KEYWORD_CANDIDATES) break;
    chosen.push(term);
    postings += documents;
  }
  return chosen;
}
