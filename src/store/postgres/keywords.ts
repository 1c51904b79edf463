import { BM25_B, BM25_K1, bm25Idf, type KeywordIndex, type KeywordMatches, type MemoryFilters } from "../memory.js";
import { addMemoryFilters, liveMemoryClause } from "../sql/memory.js";
import type { SqlFragment } from "../sql/visibility.js";
import type { Reader } from "../store.js";
import type { Viewpoint } from "../visibility.js";
import { MAX_KEYWORD_CANDIDATES, TERM_STATS_CACHE_FROM, TermStats, selectiveTerms } from "../sql/term-stats.js";
import { CommonLexemes } from "./common-lexemes.js";
import { candidateTiers, newestOrder, type Tier } from "./keyword-tiers.js";
import { pgDb } from "./run.js";

/**
 * Decisions (as `d`) whose decision or rationale holds every one of the words: plainto_tsquery
 * ANDs the words, stems them as the column was, drops stopwords, and reads its input as text,
 * never as query syntax.
 */
export const pgDecisionMatch = (words: string[]): SqlFragment => ({ sql: "d.search @@ plainto_tsquery('english', ?)", params: [words.join(" ")] });

const bm25 = `sum(w.idf * t.tf * ${BM25_K1 + 1} / (t.tf + ${BM25_K1} * (${1 - BM25_B} + ${BM25_B} * length(c.search) / ?::float8)))::float8`;
// Each candidate's query lexemes alone are unnested: `setweight` marks them A (to_tsvector writes
// every position D) and `ts_filter` keeps only A, both in C. Unnesting the whole tsvector made
// ~20 executor rows a candidate where 1–4 count; at 1,000 candidates that was most of the
// statement (measured on the bench's 100,000 notes: scoring 16 ms → 5.5 ms). The length in the
// formula is still the whole tsvector's.
const scored = (candidates: string): string =>
  `SELECT c.pk AS pk, ${bm25} AS score
     FROM (${candidates}) AS c
     CROSS JOIN LATERAL (SELECT u.lexeme, coalesce(array_length(u.positions, 1), 1) AS tf FROM unnest(ts_filter(setweight(c.search, 'A', ?::text[]), '{a}')) AS u) AS t
     JOIN unnest(?::text[], ?::float8[]) AS w(lexeme, idf) ON w.lexeme = t.lexeme
    GROUP BY c.pk
    ORDER BY score DESC, c.pk LIMIT ?`;

/**
 * From this many entries on, PostgreSQL's counts are reused for a minute. A GIN count visits every
 * matching row's heap page (its visibility), so a search's counts grow with the table long before
 * 10,000 entries: measured on bench notes, PostgreSQL's CPU for one search's corpus size and word
 * counts was 2.3 ms at 1,500 entries and 8.3 at 6,000 (4.1 once vacuumed). A minute of a team's
 * writes moves a thousand entries' idf by a few percent.
 */
const PG_TERM_STATS_CACHE_FROM = 1_000;

/**
 * Okapi BM25 over PostgreSQL's full-text index of content and tags (`memory.search`, a stored
 * tsvector with the 'english' configuration: stemmed, stop words dropped; GIN-indexed), with
 * FTS5's formula and parameters so that both backends rank alike. PostgreSQL has no BM25 of its
 * own: the query finds candidate entries through the index, reads each one's term frequencies from
 * its tsvector, and takes the document frequencies from the whole live table (a GIN count per
 * word, see TermStats, refreshed beside the searches once the table is large). An entry's length is
 * its number of distinct lexemes (what a tsvector keeps), against the table's average.
 *
 * Scoring reads each candidate's whole tsvector, so candidates are bounded, and found in tiers
 * (`candidateTiers`, docs/architecture.md "PostgreSQL keyword candidates"): the entries holding
 * every word, else those missing at most one, else the entries holding the rarest words.
 */
export class PgKeywordIndex implements KeywordIndex {
  // A stale count is refreshed after the search that found it so: at 100,000 entries the corpus
  // size took 160–700 ms, which the one search finding it a minute old used to wait for.
  private readonly stats = new TermStats({ refresh: "background", cacheFrom: PG_TERM_STATS_CACHE_FROM });

  private readonly common: CommonLexemes;

  /** `refresher`: the pool's reader, which background counts use (a caller's transaction may have ended by then). */
  constructor(private readonly refresher: Reader) {
    this.common = new CommonLexemes(refresher);
  }

  async search(r: Reader, viewpoint: Viewpoint, nowIso: string, words: string[], filters: MemoryFilters, limit: number): Promise<KeywordMatches> {
    if (words.length === 0) return { hits: [], ceiling: 0 };
    // A count made after the search runs on the pool: `r` may be a transaction that has ended.
    const counter = (later: boolean): Reader => (later ? this.refresher : r);
    const { documents, averageLength } = await this.stats.corpusSize(async (later) => {
      const row = await pgDb.get<{ documents: string; average_length: number | null }>(counter(later), "SELECT count(*) AS documents, avg(length(search))::float8 AS average_length FROM memory");
      return { documents: Number(row?.documents ?? 0), averageLength: Math.max(1, row?.average_length ?? 1) };
    });
    // Each word's lexemes (a stop word has none: it neither matches nor counts), each with a
    // tsquery matching it, as PostgreSQL writes one (quoted), for the tiers to combine.
    const lexemes = await pgDb.all<{ lexeme: string; query: string }>(
      r,
      "SELECT DISTINCT t.lexeme, phraseto_tsquery('simple', t.lexeme)::text AS query FROM unnest(?::text[]) AS w, unnest(to_tsvector('english', w)) AS t",
      words,
    );
    // How many rows hold each: the GIN index answers every count. Once the index is large, a word
    // PostgreSQL's statistics list as common (a single lexeme, matched alone) is estimated from them.
    const single = new Set(lexemes.filter((row) => row.query === `'${row.lexeme}'`).map((row) => row.lexeme));
    const frequencies = await this.stats.frequencies(
      documents,
      lexemes.map((row) => row.lexeme),
      async (lexeme, later) => {
        const share = documents >= TERM_STATS_CACHE_FROM && single.has(lexeme) ? await this.common.share(lexeme) : undefined;
        if (share !== undefined) return Math.round(share * documents);
        return Number((await pgDb.get<{ n: string }>(counter(later), "SELECT count(*) AS n FROM memory m WHERE m.search @@ phraseto_tsquery('simple', ?)", lexeme))?.n ?? 0);
      },
    );
    const idf = new Map<string, number>();
    let ceiling = 0;
    for (const [lexeme, withLexeme] of frequencies) {
      const weight = bm25Idf(Math.max(documents, withLexeme), withLexeme);
      ceiling += weight;
      idf.set(lexeme, weight);
    }
    if (idf.size === 0) return { hits: [], ceiling: 0 };
    const queries = new Map(lexemes.filter((row) => row.query !== "").map((row) => [row.lexeme, row.query]));
    const clause = liveMemoryClause(viewpoint, nowIso);
    addMemoryFilters(filters, clause);
    const where = clause.sql.join(" AND ");
    // A tier is tried only when the ones before found fewer than `limit` entries: all of them are
    // in its hits, and stay candidates by their keys rather than by their tsquery evaluated again
    // (an OR of ANDs of common words costs the GIN index several milliseconds each time).
    // Twice in the statement: the lexemes a candidate's tsvector is filtered to, and the idfs' keys.
    const lexemeList = [...idf.keys()];
    const score = (tier: Tier, before: number[]): Promise<{ pk: number; score: number }[]> => {
      const kept = before.length > 0;
      const matches = tier.queries.map(() => "m.search @@ ?::tsquery").join(" OR ");
      const newest = `SELECT m.pk, m.search FROM memory m WHERE (${matches})${kept ? " AND m.pk <> ALL(?::bigint[])" : ""} AND ${where} ORDER BY ${newestOrder(tier, frequencies, documents)} LIMIT ?`;
      const newestParams = [...tier.queries, ...(kept ? [before] : []), ...clause.params, MAX_KEYWORD_CANDIDATES];
      const candidates = kept ? `SELECT m.pk, m.search FROM memory m WHERE m.pk = ANY(?::bigint[]) AND ${where} UNION ALL (${newest})` : newest;
      const candidateParams = kept ? [before, ...clause.params, ...newestParams] : newestParams;
      return pgDb.all<{ pk: number; score: number }>(r, scored(candidates), averageLength, ...candidateParams, lexemeList, lexemeList, [...idf.values()], limit);
    };
    let hits: { pk: number; score: number }[] = [];
    for (const tier of candidateTiers(frequencies, queries, selectiveTerms(frequencies))) {
      hits = await score(tier, hits.map((hit) => hit.pk));
      if (hits.length >= limit) break;
    }
    return { hits, ceiling };
  }
}
