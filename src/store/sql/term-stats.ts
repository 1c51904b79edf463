// Corpus statistics for BM25's idf: how many entries the keyword index holds and how many hold each
// word. Counting is O(matches) on both backends; once the index is large a team asks about the same
// words again and again, so each count is then reused until it is a minute old (idf moves slowly
// with a large corpus: a minute's drift changes no ranking anyone could notice). A small index is
// counted on every search: it is cheap there, and a few writes change its statistics a lot.

const TTL_MS = 60_000;
const MAX_WORDS = 10_000;
/** From this many entries on, counts are reused for a minute. */
export const TERM_STATS_CACHE_FROM = 10_000;

export class TermStats {
  private corpus: { documents: number; averageLength: number; at: number } | undefined;
  private readonly words = new Map<string, { documents: number; at: number }>();

  async corpusSize(count: () => Promise<{ documents: number; averageLength: number }>): Promise<{ documents: number; averageLength: number }> {
    const nowMs = Date.now();
    if (this.corpus && this.corpus.documents >= TERM_STATS_CACHE_FROM && nowMs - this.corpus.at < TTL_MS) return this.corpus;
    const value = await count();
    this.corpus = { ...value, at: nowMs };
    return value;
  }

  /** How many entries hold each word, counting (with `count`) those not known for a minute. */
  async frequencies(corpusDocuments: number, words: string[], count: (word: string) => Promise<number>): Promise<Map<string, number>> {
    const nowMs = Date.now();
    const cache = corpusDocuments >= TERM_STATS_CACHE_FROM;
    const result = new Map<string, number>();
    for (const word of words) {
      const known = cache ? this.words.get(word) : undefined;
      if (known && nowMs - known.at < TTL_MS) {
        result.set(word, known.documents);
        continue;
      }
      const documents = await count(word);
      if (cache) {
        // Oldest first out: a Map iterates in insertion order, and a refreshed word is re-inserted.
        this.words.delete(word);
        if (this.words.size >= MAX_WORDS) this.words.delete(this.words.keys().next().value as string);
        this.words.set(word, { documents, at: nowMs });
      }
      result.set(word, documents);
    }
    return result;
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
