import { SqlKnowledgeReads } from "../sql/knowledge.js";
import { connectionOf } from "./transactions.js";

/** The graph reads on SQLite: lists bound as one JSON array, unnested by `json_each`. */
export const sqliteKnowledge = new SqlKnowledgeReads(async (r, sql, params) => connectionOf(r).all(sql, ...params), {
  inList: (column, values) => ({ sql: `${column} IN (SELECT value FROM json_each(?))`, params: [JSON.stringify(values)] }),
  jsonElements: (column, alias) => `json_each(${column}) AS ${alias}`,
});
