import type { Db } from "./db.js";

export interface LogRow {
  pk: number;
  id: string;
  level: "debug" | "info" | "warn" | "error";
  source: string;
  action: string;
  message: string;
  details: string;
  agent_id: string;
  created_at: string;
}

export interface LogFilters {
  level?: LogRow["level"] | undefined;
  source?: string | undefined;
  action?: string | undefined;
  since?: string | undefined;
}

export function insertLog(db: Db, row: Omit<LogRow, "pk">): number {
  const result = db.run(
    "INSERT INTO logs (id, level, source, action, message, details, agent_id, created_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?)",
    row.id,
    row.level,
    row.source,
    row.action,
    row.message,
    row.details,
    row.agent_id,
    row.created_at,
  );
  return Number(result.lastInsertRowid);
}

/** Newest first; `beforePk` continues a previous page. */
export function listLogs(db: Db, filters: LogFilters, beforePk: number | null, limit: number): LogRow[] {
  const sql: string[] = [];
  const params: unknown[] = [];
  if (filters.level !== undefined) {
    sql.push("level = ?");
    params.push(filters.level);
  }
  if (filters.source !== undefined) {
    sql.push("source = ?");
    params.push(filters.source);
  }
  if (filters.action !== undefined) {
    sql.push("action = ?");
    params.push(filters.action);
  }
  if (filters.since !== undefined) {
    sql.push("created_at > ?");
    params.push(filters.since);
  }
  if (beforePk !== null) {
    sql.push("pk < ?");
    params.push(beforePk);
  }
  const where = sql.length > 0 ? `WHERE ${sql.join(" AND ")}` : "";
  return db.all<LogRow>(`SELECT * FROM logs ${where} ORDER BY pk DESC LIMIT ?`, ...params, limit);
}

export const pruneLogs = (db: Db, before: string): number => db.run("DELETE FROM logs WHERE created_at < ?", before).changes;
