import type { Reader } from "../store.js";
import type { SqlFragment } from "./visibility.js";

// What a repository written once for both backends needs of each: a way to run a statement, and
// the few pieces of SQL the two write differently. Everything else is one statement for both:
// `?` parameters (PostgreSQL's connection numbers them), `RETURNING` (SQLite has it too),
// `CAST(… AS INTEGER)` for a truth value (SQLite's is one already; PostgreSQL's is a boolean),
// `CAST(? AS TEXT)` where PostgreSQL cannot tell a parameter's type, explicit column lists (a
// PostgreSQL table may carry a generated keyword column SQLite's has not).

/**
 * A LIMIT bound as a parameter, for statements run on every request. SQLite (3.4x) plans with the
 * value of a bare `LIMIT ?`, and so prepares the statement again every time a value is bound to
 * it, which better-sqlite3 does on every run: a parse and a plan per call, half of the
 * statement's cost for a short one. Bound through a cast the plan is made once (and is the same
 * plan: the hot statements' were compared). PostgreSQL takes the cast as it is.
 */
export const LIMIT_PARAM = "LIMIT CAST(? AS INTEGER)";

/** Runs the shared SQL on one backend, on the connection behind a `Reader` or `Tx`. */
interface SqlRunner {
  /** The rows of a query, or of a write's RETURNING. */
  all<T>(r: Reader, sql: string, ...params: unknown[]): Promise<T[]>;
  /** The first row of a query, if any. */
  get<T>(r: Reader, sql: string, ...params: unknown[]): Promise<T | undefined>;
  /** A write without RETURNING: resolves to the number of rows it changed. */
  run(r: Reader, sql: string, ...params: unknown[]): Promise<number>;
}

export interface SqlDialect {
  /** `column IN (values)` with the list bound as one parameter. */
  inList(column: string, values: readonly string[]): SqlFragment;
  /** The same for integer keys. */
  inKeys(column: string, values: readonly number[]): SqlFragment;
  /** A FROM item of the bound strings, one row each, as `<alias>.value` (a bulk insert's source). */
  listRows(values: readonly string[], alias: string): SqlFragment;
  /**
   * A FROM item of the records in a bound JSON array of objects, one row each, with `columns` (the
   * objects' keys) as `<alias>.<key>`: several values per row in one parameter (a batch's rows).
   */
  jsonRecords(records: readonly object[], columns: Readonly<Record<string, "integer" | "text">>, alias: string): SqlFragment;
  /** A FROM item of the elements of the JSON array in `column`, as `<alias>.value`. */
  jsonElements(column: string, alias: string): string;
  /**
   * A JSON array (as text, `["a","b"]`, `[]` when no rows) of `expression` over an aggregate's
   * rows in `orderBy`'s order.
   */
  jsonArray(expression: string, orderBy: string): string;
  /** Seconds from the RFC 3339 text in `from` to the one in `to`, as a floating-point number. */
  secondsBetween(from: string, to: string): string;
  /**
   * What ends a SELECT inside a transaction so its rows stay locked until it ends, and a second
   * transaction reading them waits and then reads them as the first left them ("" where writers take
   * turns anyway, and outside transactions).
   */
  lockRows(r: Reader, alias: string): string;
  /** The same, but rows another transaction holds are passed over rather than waited for (a queue's claim). */
  skipLocked(r: Reader, alias: string): string;
  /** A join the planner must take in the order written (SQLite's CROSS JOIN; PostgreSQL plans it well unaided). */
  readonly orderedJoin: string;
  /**
   * What follows a table in FROM to make the planner walk `index` (SQLite's INDEXED BY; ""
   * on PostgreSQL, whose statistics choose well). For an ORDER BY … LIMIT that SQLite's planner
   * would otherwise answer by sorting every row a partial index matched.
   */
  indexedBy(index: string): string;
  /** The SHA-256 of the text `expression` as UTF-8, in lower-case hex. */
  sha256Hex(expression: string): string;
  /** Whether a WITH may hold an INSERT or UPDATE whose rows the statement uses (PostgreSQL's may; SQLite's may not). */
  readonly writesInWith: boolean;
}

/** A backend's runner with its dialect: what every repository in this folder is built on. */
export interface SqlDb extends SqlRunner {
  readonly dialect: SqlDialect;
}
