// The words of a free-text query that a keyword search looks for (search, decisions, blueprint checks).

const MAX_QUERY_TERMS = 32;

// Common English function words: matching on them alone says nothing about relevance, and in
// the keyword index's any-word match they would pull unrelated entries into the ranking.
const STOPWORDS = new Set(
  (
    "a about above after again against all am an and any are as at be because been before being below between both " +
    "but by can could did do does doing down during each few for from further had has have having he her here hers " +
    "him his how i if in into is it its itself just me more most my no nor not now of off on once only or other our " +
    "ours out over own same she should so some such than that the their theirs them then there these they this " +
    "those through to too under until up very was we were what when where which while who whom why will with would " +
    "you your yours"
  ).split(" "),
);

/**
 * The words of free text a keyword search looks for: lower-cased, each once, in order, stopwords
 * dropped unless nothing else is left. Only letters, digits and underscores make a word, so no
 * query syntax gets through.
 */
export function keywordTerms(text: string): string[] {
  const words = [...new Set((text.toLowerCase().match(/[\p{L}\p{N}_]+/gu) ?? []).filter((word) => word.length <= 64))];
  const meaningful = words.filter((word) => !STOPWORDS.has(word));
  return (meaningful.length > 0 ? meaningful : words).slice(0, MAX_QUERY_TERMS);
}
