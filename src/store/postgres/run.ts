import type { SqlDb } from "../sql/dialect.js";
import { connectionOf, isTx } from "./transactions.js";

/**
 * The shared SQL on PostgreSQL. Lists are bound as arrays; rows read inside a transaction to be
 * changed by it are locked (`FOR UPDATE`), since transactions here overlap.
 */
export const pgDb: SqlDb = {
  all: (r, sql, ...params) => connectionOf(r).all(sql, ...params),
  get: (r, sql, ...params) => connectionOf(r).get(sql, ...params),
  run: async (r, sql, ...params) => (await connectionOf(r).run(sql, ...params)).changes,
  dialect: {
    inList: (column, values) => ({ sql: `${column} = ANY(?::text[])`, params: [[...values]] }),
    inKeys: (column, values) => ({ sql: `${column} = ANY(?::bigint[])`, params: [[...values]] }),
    listRows: (values, alias) => ({ sql: `unnest(?::text[]) AS ${alias}(value)`, params: [[...values]] }),
    jsonRecords: (records, columns, alias) => ({
      sql: `jsonb_to_recordset(CAST(? AS jsonb)) AS ${alias}(${Object.entries(columns)
        .map(([name, type]) => `${name} ${type === "integer" ? "bigint" : "text"}`)
        .join(", ")})`,
      params: [JSON.stringify(records)],
    }),
    jsonElements: (column, alias) => `jsonb_array_elements_text(${column}::jsonb) AS ${alias}(value)`,
    // array_to_json writes SQLite's form (no spaces); json_agg would not. NULL over no rows.
    jsonArray: (expression, orderBy) => `COALESCE(array_to_json(array_agg(${expression} ORDER BY ${orderBy}))::text, '[]')`,
    secondsBetween: (from, to) => `EXTRACT(EPOCH FROM (${to}::timestamptz - ${from}::timestamptz))::float8`,
    lockRows: (r, alias) => (isTx(r) ? ` FOR UPDATE OF ${alias}` : ""),
    skipLocked: (r, alias) => (isTx(r) ? ` FOR UPDATE OF ${alias} SKIP LOCKED` : ""),
    orderedJoin: "JOIN",
    indexedBy: () => "",
    sha256Hex: (expression) => `encode(sha256(convert_to(${expression}, 'UTF8')), 'hex')`,
    writesInWith: true,
  },
};
