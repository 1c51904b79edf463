import type { LogLevel } from "../wire/logs.js";
import { rowColumns } from "./row-columns.js";
import type { Reader, Tx } from "./store.js";

export interface LogRow {
  pk: number;
  id: string;
  level: LogLevel;
  source: string;
  action: string;
  message: string;
  details: string;
  agent_id: string;
  created_at: string;
}

export const LOG_ROW_COLUMNS = rowColumns<LogRow>("logs", {
  pk: true, id: true, level: true, source: true, action: true, message: true, details: true, agent_id: true, created_at: true,
});

export interface LogFilters {
  level?: LogRow["level"] | undefined;
  source?: string | undefined;
  action?: string | undefined;
  since?: string | undefined;
}

export interface LogStore {
  insert(tx: Tx, row: Omit<LogRow, "pk">): Promise<number>;
  /** Newest first; `beforePk` continues a previous page. */
  list(r: Reader, filters: LogFilters, beforePk: number | null, limit: number): Promise<LogRow[]>;
  prune(tx: Tx, before: string): Promise<number>;
}
