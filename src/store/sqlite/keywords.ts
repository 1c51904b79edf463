import { bm25Idf, type KeywordIndex, type KeywordMatches, type MemoryFilters } from "../memory.js";
import { addMemoryFilters, liveMemoryClause } from "../sql/memory.js";
import { LIMIT_PARAM } from "../sql/dialect.js";
import type { SqlFragment } from "../sql/visibility.js";
import type { Reader } from "../store.js";
import type { Viewpoint } from "../visibility.js";
import { MAX_KEYWORD_CANDIDATES, TermStats, selectiveTerms } from "../sql/term-stats.js";
import { sqliteDb } from "./run.js";

/** The FTS5 query for plain words: each quoted (no operator injection), any one (or, with AND, every one) to match. */
// A double quote inside a word is doubled, so no word can end its string early and become syntax.
export const fts5Query = (words: string[], operator: "OR" | "AND" = "OR"): string => words.map((word) => `"${word.replaceAll('"', '""')}"`).join(` ${operator} `);

/** Decisions (as `d`) whose decision or rationale holds every one of the words (FTS5). */
export const sqliteDecisionMatch = (words: string[]): SqlFragment => ({
  sql: "d.pk IN (SELECT rowid FROM decisions_fts WHERE decisions_fts MATCH ?)",
  params: [fts5Query(words, "AND")],
});

/**
 * FTS5's BM25 over content and tags (porter-stemmed, diacritics folded). The ceiling's document
 * frequencies come from the same index, so they agree with the scores: every row it holds counts,
 * as bm25() counts them.
 *
 * FTS5 ranks every row that matches before it can return the best: with a common word in the
 * query that is most of a large store. So when the query's rarer words are selective enough
 * (`selectiveTerms`), only the entries holding one of them are candidates, found by
 * `(rare words) AND (all words)`. bm25() sums a score per phrase of the query, and there the rare
 * words are phrases twice; subtracting each candidate's bm25() for the rare words alone leaves
 * exactly its score for the whole query. When even the rarest word is common, the newest
 * MAX_KEYWORD_CANDIDATES of its entries are the candidates, as on PostgreSQL.
 */
export class SqliteKeywordIndex implements KeywordIndex {
  private readonly stats = new TermStats();

  async search(r: Reader, viewpoint: Viewpoint, nowIso: string, words: string[], filters: MemoryFilters, limit: number): Promise<KeywordMatches> {
    if (words.length === 0) return { hits: [], ceiling: 0 };
    const { documents } = await this.stats.corpusSize(async () => ({
      documents: (await sqliteDb.get<{ n: number }>(r, "SELECT count(*) AS n FROM memory"))?.n ?? 0,
      averageLength: 0,
    }));
    const frequencies = await this.stats.frequencies(documents, words, async (word) => (await sqliteDb.get<{ n: number }>(r, "SELECT count(*) AS n FROM memory_fts WHERE memory_fts MATCH ?", fts5Query([word])))?.n ?? 0);
    let ceiling = 0;
    for (const withWord of frequencies.values()) ceiling += bm25Idf(Math.max(documents, withWord), withWord);
    const clause = liveMemoryClause(viewpoint, nowIso);
    addMemoryFilters(filters, clause);
    const selective = selectiveTerms(frequencies);
    const matching = [...frequencies.values()].filter((withWord) => withWord > 0).length;
    // The counts may be a minute old: a word they call absent may have been written since.
    if (selective.length === 0 || selective.length === matching) {
      const hits = await sqliteDb.all<{ pk: number; score: number }>(
        r,
        `SELECT m.pk AS pk, -f.rank AS score FROM memory_fts f JOIN memory m ON m.pk = f.rowid
          WHERE memory_fts MATCH ? AND ${clause.sql.join(" AND ")}
          ORDER BY f.rank ${LIMIT_PARAM}`,
        fts5Query(words),
        ...clause.params,
        limit,
      );
      return { hits, ceiling };
    }
    const candidates = await sqliteDb.all<{ pk: number; score: number }>(
      r,
      `SELECT m.pk AS pk, -f.rank AS score FROM memory_fts f JOIN memory m ON m.pk = f.rowid
        WHERE memory_fts MATCH ? AND ${clause.sql.join(" AND ")}
        ORDER BY f.rowid DESC ${LIMIT_PARAM}`,
      `(${fts5Query(selective)}) AND (${fts5Query(words)})`,
      ...clause.params,
      MAX_KEYWORD_CANDIDATES,
    );
    if (candidates.length === 0) return { hits: [], ceiling };
    const pks = candidates.map((row) => row.pk);
    const twice = await sqliteDb.all<{ pk: number; score: number }>(
      r,
      "SELECT rowid AS pk, -rank AS score FROM memory_fts WHERE memory_fts MATCH ? AND rowid BETWEEN ? AND ?",
      fts5Query(selective),
      Math.min(...pks),
      Math.max(...pks),
    );
    const counted = new Map(twice.map((row) => [row.pk, row.score]));
    const hits = candidates
      .map((row) => ({ pk: row.pk, score: row.score - (counted.get(row.pk) ?? 0) }))
      .sort((a, b) => b.score - a.score || a.pk - b.pk)
      .slice(0, limit);
    return { hits, ceiling };
  }
}
