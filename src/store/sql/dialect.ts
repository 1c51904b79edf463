import type { Reader } from "../store.js";
import type { SqlFragment } from "./visibility.js";

// What a repository written once for both backends needs of each: a way to run a statement, and
// the few pieces of SQL the two write differently.

/** Runs one statement: the rows of a query, or of a write's RETURNING (SQLite has it too). */
export type RunQuery = <T>(r: Reader, sql: string, params: unknown[]) => Promise<T[]>;

export interface SqlDialect {
  /** `column IN (values)` with the list bound as one parameter. */
  inList(column: string, values: readonly string[]): SqlFragment;
  /** A FROM item of the elements of the JSON array in `column`, as `<alias>.value`. */
  jsonElements(column: string, alias: string): string;
  /** What ends a SELECT inside a transaction so its rows stay locked until it ends ("" where writers take turns anyway). */
  lockRows(r: Reader, alias: string): string;
}
