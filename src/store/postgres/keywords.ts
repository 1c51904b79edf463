import { BM25_B, BM25_K1, bm25Idf, type KeywordIndex, type KeywordMatches, type MemoryFilters } from "../memory.js";
import { addMemoryFilters, liveMemoryClause } from "../sql/memory.js";
import type { SqlFragment } from "../sql/visibility.js";
import type { Reader } from "../store.js";
import type { Viewpoint } from "../visibility.js";
import { MAX_KEYWORD_CANDIDATES, TermStats, selectiveTerms } from "../sql/term-stats.js";
import { pgDb } from "./run.js";

/**
 * Decisions (as `d`) whose decision or rationale holds every one of the words: plainto_tsquery
 * ANDs the words, stems them as the column was, drops stopwords, and reads its input as text,
 * never as query syntax.
 */
export const pgDecisionMatch = (words: string[]): SqlFragment => ({ sql: "d.search @@ plainto_tsquery('english', ?)", params: [words.join(" ")] });

/**
 * Okapi BM25 over PostgreSQL's full-text index of content and tags (`memory.search`, a stored
 * tsvector with the 'english' configuration: stemmed, stop words dropped; GIN-indexed), with
 * FTS5's formula and parameters so that both backends rank alike. PostgreSQL has no BM25 of its
 * own: the query finds the visible entries holding any of the words through the index, reads each
 * one's term frequencies from its tsvector, and takes the document frequencies from the whole
 * live table (a GIN count per word, see TermStats). An entry's length is its number of distinct
 * lexemes (what a tsvector keeps), against the table's average.
 */
// Scoring reads each candidate's whole tsvector, so the candidates are bounded (`selectiveTerms`).
// When even the rarest lexeme is that common, the newest MAX_KEYWORD_CANDIDATES of its entries are scored.

export class PgKeywordIndex implements KeywordIndex {
  private readonly stats = new TermStats();

  async search(r: Reader, viewpoint: Viewpoint, nowIso: string, words: string[], filters: MemoryFilters, limit: number): Promise<KeywordMatches> {
    if (words.length === 0) return { hits: [], ceiling: 0 };
    const { documents, averageLength } = await this.stats.corpusSize(async () => {
      const row = await pgDb.get<{ documents: string; average_length: number | null }>(r, "SELECT count(*) AS documents, avg(length(search))::float8 AS average_length FROM memory");
      return { documents: Number(row?.documents ?? 0), averageLength: Math.max(1, row?.average_length ?? 1) };
    });
    // Each word's lexemes (a stop word has none: it neither matches nor counts).
    const lexemes = (await pgDb.all<{ lexeme: string }>(r, "SELECT DISTINCT t.lexeme FROM unnest(?::text[]) AS w, unnest(to_tsvector('english', w)) AS t", words)).map((row) => row.lexeme);
    // How many rows hold each: the GIN index answers every count.
    const frequencies = await this.stats.frequencies(documents, lexemes, async (lexeme) =>
      Number((await pgDb.get<{ n: string }>(r, "SELECT count(*) AS n FROM memory m WHERE m.search @@ phraseto_tsquery('simple', ?)", lexeme))?.n ?? 0),
    );
    const idf = new Map<string, number>();
    let ceiling = 0;
    for (const [lexeme, withLexeme] of frequencies) {
      const weight = bm25Idf(Math.max(documents, withLexeme), withLexeme);
      ceiling += weight;
      idf.set(lexeme, weight);
    }
    if (idf.size === 0) return { hits: [], ceiling: 0 };
    const clause = liveMemoryClause(viewpoint, nowIso);
    addMemoryFilters(filters, clause);
    const hits = await pgDb.all<{ pk: number; score: number }>(
      r,
      `SELECT c.pk AS pk, sum(w.idf * t.tf * ${BM25_K1 + 1} / (t.tf + ${BM25_K1} * (${1 - BM25_B} + ${BM25_B} * length(c.search) / ?::float8)))::float8 AS score
         FROM (SELECT m.pk, m.search
                 FROM (SELECT string_agg(phraseto_tsquery('simple', l)::text, ' | ')::tsquery AS q FROM unnest(?::text[]) AS l) AS query
                 JOIN memory m ON m.search @@ query.q
                WHERE ${clause.sql.join(" AND ")}
                ORDER BY m.pk DESC LIMIT ?) AS c
         CROSS JOIN LATERAL (SELECT u.lexeme, coalesce(array_length(u.positions, 1), 1) AS tf FROM unnest(c.search) AS u) AS t
         JOIN unnest(?::text[], ?::float8[]) AS w(lexeme, idf) ON w.lexeme = t.lexeme
        GROUP BY c.pk
        ORDER BY score DESC, c.pk LIMIT ?`,
      averageLength,
      selectiveTerms(frequencies),
      ...clause.params,
      MAX_KEYWORD_CANDIDATES,
      [...idf.keys()],
      [...idf.values()],
      limit,
    );
    return { hits, ceiling };
  }
}
