import { bm25Idf, type KeywordIndex, type KeywordMatches, type MemoryFilters } from "../memory.js";
import { addMemoryFilters, liveMemoryClause } from "../sql/memory.js";
import type { SqlFragment } from "../sql/visibility.js";
import type { Reader } from "../store.js";
import type { Viewpoint } from "../visibility.js";
import { TermStats } from "../sql/term-stats.js";
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
 */
export class SqliteKeywordIndex implements KeywordIndex {
  private readonly stats = new TermStats();

  async search(r: Reader, viewpoint: Viewpoint, nowIso: string, words: string[], filters: MemoryFilters, limit: number): Promise<KeywordMatches> {
    if (words.length === 0) return { hits: [], ceiling: 0 };
    const clause = liveMemoryClause(viewpoint, nowIso);
    addMemoryFilters(filters, clause);
    const hits = await sqliteDb.all<{ pk: number; score: number }>(
      r,
      `SELECT m.pk AS pk, -f.rank AS score FROM memory_fts f JOIN memory m ON m.pk = f.rowid
        WHERE memory_fts MATCH ? AND ${clause.sql.join(" AND ")}
        ORDER BY f.rank LIMIT ?`,
      fts5Query(words),
      ...clause.params,
      limit,
    );
    const { documents } = await this.stats.corpusSize(async () => ({
      documents: (await sqliteDb.get<{ n: number }>(r, "SELECT count(*) AS n FROM memory"))?.n ?? 0,
      averageLength: 0,
    }));
    const frequencies = await this.stats.frequencies(documents, words, async (word) => (await sqliteDb.get<{ n: number }>(r, "SELECT count(*) AS n FROM memory_fts WHERE memory_fts MATCH ?", fts5Query([word])))?.n ?? 0);
    let ceiling = 0;
    for (const withWord of frequencies.values()) ceiling += bm25Idf(Math.max(documents, withWord), withWord);
    return { hits, ceiling };
  }
}
