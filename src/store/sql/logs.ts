import type { LogFilters, LogRow, LogStore } from "../logs.js";
import type { Reader, Tx } from "../store.js";
import type { SqlDb } from "./dialect.js";

export class SqlLogs implements LogStore {
  constructor(private readonly db: SqlDb) {}

  async insert(tx: Tx, row: Omit<LogRow, "pk">): Promise<number> {
    const [inserted] = await this.db.all<{ pk: unknown }>(
      tx,
      "INSERT INTO logs (id, level, source, action, message, details, agent_id, created_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?) RETURNING pk",
      row.id,
      row.level,
      row.source,
      row.action,
      row.message,
      row.details,
      row.agent_id,
      row.created_at,
    );
    return Number(inserted?.pk);
  }

  list(r: Reader, filters: LogFilters, beforePk: number | null, limit: number): Promise<LogRow[]> {
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
    return this.db.all<LogRow>(r, `SELECT * FROM logs ${where} ORDER BY pk DESC LIMIT ?`, ...params, limit);
  }

  prune(tx: Tx, before: string): Promise<number> {
    return this.db.run(tx, "DELETE FROM logs WHERE created_at < ?", before);
  }
}
