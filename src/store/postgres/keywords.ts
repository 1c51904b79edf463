import type { KeywordIndex, MemoryFilters } from "../memory.js";
import { addMemoryFilters, liveMemoryClause } from "../sql/memory.js";
import type { SqlFragment } from "../sql/visibility.js";
import type { Reader } from "../store.js";
import type { Viewpoint } from "../visibility.js";
import { pgDb } from "./run.js";

/**
 * The query of plain words, any one of which may match: each word becomes its own
 * `plainto_tsquery('english', word)` (stemmed; a stopword gives an empty query and is dropped),
 * parenthesised and joined with `|`. The words are bound as one text array, never spliced into the
 * SQL, and `plainto_tsquery` treats its input as text, not query syntax. When every word is a
 * stopword the aggregate is NULL, and `search @@ NULL` matches nothing.
 */
const WORDS_QUERY = `(SELECT string_agg('(' || plainto_tsquery('english', w)::text || ')', ' | ')::tsquery AS q
   FROM unnest(?::text[]) AS w WHERE plainto_tsquery('english', w)::text <> '')`;

/**
 * Decisions (as `d`) whose decision or rationale holds every one of the words: plainto_tsquery
 * ANDs the words, stems them as the column was, drops stopwords, and reads its input as text,
 * never as query syntax.
 */
export const pgDecisionMatch = (words: string[]): SqlFragment => ({ sql: "d.search @@ plainto_tsquery('english', ?)", params: [words.join(" ")] });

/**
 * PostgreSQL full-text search over content and tags (`memory.search`, a stored generated tsvector
 * with the 'english' configuration, GIN-indexed). The rank is `ts_rank_cd` (cover density,
 * normalised to 0..1 by flag 32), negated so that lower is better as the interface says. It is
 * not BM25 (SQLite's FTS5 rank): it has no inverse document frequency, so the order of matches
 * differs from SQLite's; search quality is measured against SQLite's.
 */
export class PgKeywordIndex implements KeywordIndex {
  search(r: Reader, viewpoint: Viewpoint, nowIso: string, words: string[], filters: MemoryFilters, limit: number): Promise<{ pk: number; rank: number }[]> {
    if (words.length === 0) return Promise.resolve([]);
    const clause = liveMemoryClause(viewpoint, nowIso);
    addMemoryFilters(filters, clause);
    return pgDb.all<{ pk: number; rank: number }>(
      r,
      `SELECT m.pk AS pk, (-ts_rank_cd(m.search, query.q, 32))::float8 AS rank
        FROM ${WORDS_QUERY} AS query JOIN memory m ON m.search @@ query.q
        WHERE ${clause.sql.join(" AND ")}
        ORDER BY rank, m.pk LIMIT ?`,
      words,
      ...clause.params,
      limit,
    );
  }
}
