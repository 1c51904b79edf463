import type { RunQuery } from "../sql/knowledge.js";
import { connectionOf } from "./transactions.js";

/** A statement of the shared SQL, on SQLite: rows of a query, or of a write's RETURNING. */
export const sqliteRun: RunQuery = async (r, sql, params) => connectionOf(r).all(sql, ...params);
