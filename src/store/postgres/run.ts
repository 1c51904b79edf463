import type { RunQuery, SqlDialect } from "../sql/dialect.js";
import { connectionOf, rowLock } from "./transactions.js";

/** A statement of the shared SQL, on PostgreSQL: rows of a query, or of a write's RETURNING. */
export const pgRun: RunQuery = (r, sql, params) => connectionOf(r).all(sql, ...params);

/** Lists bound as one text array, JSON arrays unnested by jsonb, rows read in a transaction locked. */
export const pgDialect: SqlDialect = {
  inList: (column, values) => ({ sql: `${column} = ANY(?::text[])`, params: [[...values]] }),
  jsonElements: (column, alias) => `jsonb_array_elements_text(${column}::jsonb) AS ${alias}(value)`,
  lockRows: (r, alias) => rowLock(r, alias),
};
