import { SqlKnowledgeReads } from "../sql/knowledge.js";
import { sqliteRun } from "./run.js";

/** The graph reads on SQLite: lists bound as one JSON array, unnested by `json_each`. */
export const sqliteKnowledge = new SqlKnowledgeReads(sqliteRun, {
  inList: (column, values) => ({ sql: `${column} IN (SELECT value FROM json_each(?))`, params: [JSON.stringify(values)] }),
  jsonElements: (column, alias) => `json_each(${column}) AS ${alias}`,
});
