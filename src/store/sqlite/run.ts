import type { SqlDb } from "../sql/dialect.js";
import type { Reader } from "../store.js";
import { SHA256_FUNCTION } from "./connection.js";
import { connectionOf } from "./transactions.js";

const asJson = (values: readonly unknown[]): string => JSON.stringify(values);

/**
 * The shared SQL on SQLite. Lists are bound as one JSON array and unnested by `json_each`; one
 * writer runs one transaction at a time, so nothing needs a row lock.
 */
export const sqliteDb: SqlDb = {
  all: <T>(r: Reader, sql: string, ...params: unknown[]) => Promise.resolve(connectionOf(r).all<T>(sql, ...params)),
  get: <T>(r: Reader, sql: string, ...params: unknown[]) => Promise.resolve(connectionOf(r).get<T>(sql, ...params)),
  run: (r, sql, ...params) => Promise.resolve(connectionOf(r).run(sql, ...params).changes),
  dialect: {
    inList: (column, values) => ({ sql: `${column} IN (SELECT value FROM json_each(?))`, params: [asJson(values)] }),
    inKeys: (column, values) => ({ sql: `${column} IN (SELECT value FROM json_each(?))`, params: [asJson(values)] }),
    listRows: (values, alias) => ({ sql: `json_each(?) AS ${alias}`, params: [asJson(values)] }),
    jsonRecords: (records, columns, alias) => ({
      sql: `(SELECT ${Object.keys(columns)
        .map((name) => `json_extract(value, '$.${name}') AS ${name}`)
        .join(", ")} FROM json_each(?)) AS ${alias}`,
      params: [JSON.stringify(records)],
    }),
    jsonElements: (column, alias) => `json_each(${column}) AS ${alias}`,
    jsonArray: (expression, orderBy) => `json_group_array(${expression} ORDER BY ${orderBy})`,
    secondsBetween: (from, to) => `((julianday(${to}) - julianday(${from})) * 86400.0)`,
    lockRows: () => "",
    skipLocked: () => "",
    orderedJoin: "CROSS JOIN",
    indexedBy: (index) => ` INDEXED BY ${index}`,
    sha256Hex: (expression) => `${SHA256_FUNCTION}(${expression})`,
    writesInWith: false,
  },
};
