import { SqlKnowledgeReads } from "../sql/knowledge.js";
import { pgRun } from "./run.js";

/** The graph reads on PostgreSQL: lists bound as one text array, JSON arrays unnested by jsonb. */
export const pgKnowledge = new SqlKnowledgeReads(pgRun, {
  inList: (column, values) => ({ sql: `${column} = ANY(?::text[])`, params: [[...values]] }),
  jsonElements: (column, alias) => `jsonb_array_elements_text(${column}::jsonb) AS ${alias}(value)`,
});
