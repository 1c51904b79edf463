import { SqlKnowledgeReads } from "../sql/knowledge.js";
import { connectionOf } from "./transactions.js";

/** The graph reads on PostgreSQL: lists bound as one text array, JSON arrays unnested by jsonb. */
export const pgKnowledge = new SqlKnowledgeReads((r, sql, params) => connectionOf(r).all(sql, ...params), {
  inList: (column, values) => ({ sql: `${column} = ANY(?::text[])`, params: [[...values]] }),
  jsonElements: (column, alias) => `jsonb_array_elements_text(${column}::jsonb) AS ${alias}(value)`,
});
