import type { KeywordIndex, MemoryFilters } from "../memory.js";
import { addMemoryFilters, liveMemoryClause } from "../sql/memory.js";
import type { SqlFragment } from "../sql/visibility.js";
import type { Reader } from "../store.js";
import type { Viewpoint } from "../visibility.js";
import { sqliteDb } from "./run.js";

/** The FTS5 query for plain words: each quoted (no operator injection), any one (or, with AND, every one) to match. */
// A double quote inside a word is doubled, so no word can end its string early and become syntax.
export const fts5Query = (words: string[], operator: "OR" | "AND" = "OR"): string => words.map((word) => `"${word.replaceAll('"', '""')}"`).join(` ${operator} `);

/** Decisions (as `d`) whose decision or rationale holds every one of the words (FTS5). */
export const sqliteDecisionMatch = (words: string[]): SqlFragment => ({
  sql: "d.pk IN (SELECT rowid FROM decisions_fts WHERE decisions_fts MATCH ?)",
  params: [fts5Query(words, "AND")],
});

/** FTS5 BM25 over content and tags. */
export class SqliteKeywordIndex implements KeywordIndex {
  search(r: Reader, viewpoint: Viewpoint, nowIso: string, words: string[], filters: MemoryFilters, limit: number): Promise<{ pk: number; rank: number }[]> {
    if (words.length === 0) return Promise.resolve([]);
    const clause = liveMemoryClause(viewpoint, nowIso);
    addMemoryFilters(filters, clause);
    return sqliteDb.all<{ pk: number; rank: number }>(
      r,
      `SELECT m.pk AS pk, f.rank AS rank FROM memory_fts f JOIN memory m ON m.pk = f.rowid
        WHERE memory_fts MATCH ? AND ${clause.sql.join(" AND ")}
        ORDER BY f.rank LIMIT ?`,
      fts5Query(words),
      ...clause.params,
      limit,
    );
  }
}
