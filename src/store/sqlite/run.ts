import type { RunQuery, SqlDialect } from "../sql/dialect.js";
import { connectionOf } from "./transactions.js";

/** A statement of the shared SQL, on SQLite: rows of a query, or of a write's RETURNING. */
export const sqliteRun: RunQuery = async (r, sql, params) => connectionOf(r).all(sql, ...params);

/** Lists bound as one JSON array, unnested by `json_each`; one writer at a time, so no row locks. */
export const sqliteDialect: SqlDialect = {
  inList: (column, values) => ({ sql: `${column} IN (SELECT value FROM json_each(?))`, params: [JSON.stringify(values)] }),
  jsonElements: (column, alias) => `json_each(${column}) AS ${alias}`,
  lockRows: () => "",
};
