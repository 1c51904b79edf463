import type { SharedFailureLog } from "../store.js";
import type { PgDb } from "./connection.js";

/** One row per failed authentication; the throttle reads a key's last minute, a job forgets older rows. */
export class PgAuthFailures implements SharedFailureLog {
  constructor(private readonly db: PgDb) {}

  async recent(key: string, sinceMs: number, limit: number): Promise<number[]> {
    const rows = await this.db.all<{ at_ms: number }>(
      "SELECT at_ms FROM (SELECT at_ms FROM auth_failures WHERE key = ? AND at_ms > ? ORDER BY at_ms DESC LIMIT ?) latest ORDER BY at_ms",
      key,
      sinceMs,
      limit,
    );
    return rows.map((row) => Number(row.at_ms));
  }

  async record(key: string, atMs: number): Promise<void> {
    await this.db.run("INSERT INTO auth_failures (key, at_ms) VALUES (?, ?)", key, atMs);
  }

  async forget(throughMs: number): Promise<number> {
    return (await this.db.run("DELETE FROM auth_failures WHERE at_ms <= ?", throughMs)).changes;
  }
}
