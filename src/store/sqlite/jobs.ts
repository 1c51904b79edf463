import type { JobStore } from "../jobs.js";
import type { Tx } from "../store.js";
import { connectionOf } from "./transactions.js";

export class SqliteJobs implements JobStore {
  async claim(tx: Tx, name: string, nowIso: string, nextRunAt: string): Promise<boolean> {
    return (
      connectionOf(tx).run(
        `INSERT INTO jobs (name, next_run_at) VALUES (?, ?)
         ON CONFLICT (name) DO UPDATE SET next_run_at = excluded.next_run_at WHERE jobs.next_run_at <= ?`,
        name,
        nextRunAt,
        nowIso,
      ).changes === 1
    );
  }
}
