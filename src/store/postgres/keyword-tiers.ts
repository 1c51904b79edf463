// Where PostgreSQL's keyword search looks for candidates, most selective first (docs/architecture.md
// "PostgreSQL keyword candidates"). A GIN AND of every word is far more selective than any one
// word, and its entries are the ones BM25 ranks first; only when a tier holds fewer entries than
// the search asks for does the next, wider one run.

/**
 * One tier: the tsqueries an entry matches one of, its words, and whether an entry must hold all
 * of them, any, or all but one. Each tsquery is a GIN scan of its own whose bitmaps PostgreSQL
 * ORs: "all but one" as n ANDs took 6.6 ms where one tsquery ORing them took 9–14 (100,000 notes,
 * 7 words), since GIN checks that one's every word for each entry holding one of the rarest two.
 */
export interface Tier {
  queries: string[];
  words: string[];
  holds: "all" | "any" | "allButOne";
}

/** From this share of the entries, a tier's newest entries are found walking the primary key backwards. */
const WALK_FROM_SHARE = 0.1;

/**
 * How a tier's newest candidates are ordered. Walking the primary key backwards reads about
 * MAX_KEYWORD_CANDIDATES (1,000) / share rows, few for a common tier, but nearly the whole table for one
 * that holds fewer entries than the planner guessed; the planner's guess of a tsquery's rows is
 * rough, and it chose the walk for words on 2 % of 100,000 entries (150–250 ms instead of 5–12).
 * The words' counts are known here, so the walk is left possible only for a tier they say is
 * common: any of some words, when one of them is; all of them, when the product of their shares
 * is (words that go together hold more entries than that, not fewer). Every other tier is ordered
 * by an expression no index gives, which leaves the GIN bitmap and a sort of its matches: its
 * cost is bounded by the matches.
 */
export function newestOrder(tier: Tier, frequencies: Map<string, number>, documents: number): string {
  const shares = tier.words.map((word) => (frequencies.get(word) ?? 0) / Math.max(1, documents));
  const share = tier.holds === "any" ? Math.max(0, ...shares) : tier.holds === "all" ? shares.reduce((product, one) => product * one, 1) : 0;
  return share >= WALK_FROM_SHARE ? "m.pk DESC" : "m.pk + 0 DESC";
}

/** Above this many words "all but one" is not tried: its tsqueries grow with the square of the words. */
export const MAX_ALL_BUT_ONE_WORDS = 10;

/**
 * The tiers for a query. When `selective` (the rarest words, `selectiveTerms`) is every word an
 * entry holds, few entries hold any: one tier scores them all, as BM25 over every match would.
 * Otherwise: the entries holding every word the query holds; then (from three words) those missing
 * at most one; then (from two) those holding one of `selective`. `frequencies` are the words'
 * document frequencies (a word no entry holds is left out), `queries` each word's own tsquery as
 * PostgreSQL prints it. The search scores a tier's entries with those of the tiers before it.
 */
export function candidateTiers(frequencies: Map<string, number>, queries: Map<string, string>, selective: string[]): Tier[] {
  const atom = (word: string): string => `(${queries.get(word) as string})`;
  const present = [...frequencies]
    .filter(([word, documents]) => documents > 0 && queries.has(word))
    .sort((a, b) => a[1] - b[1])
    .map(([word]) => word);
  const rare = selective.filter((word) => queries.has(word));
  if (present.length === 0) return [];
  const allOf = (words: string[]): string => words.map(atom).join(" & ");
  // One GIN scan ORing single words is a union of their posting lists: cheap as it is.
  const anyOf = (words: string[]): Tier => ({ queries: [words.map(atom).join(" | ")], words, holds: "any" });
  if (rare.length === present.length) return [anyOf(rare)];
  const tiers: Tier[] = [{ queries: [allOf(present)], words: present, holds: "all" }];
  if (present.length > 2 && present.length <= MAX_ALL_BUT_ONE_WORDS) {
    const queries = present.map((_, left) => allOf(present.filter((__, index) => index !== left)));
    tiers.push({ queries, words: present, holds: "allButOne" });
  }
  if (rare.length > 0) tiers.push(anyOf(rare));
  return tiers;
}
