import type { JobStore } from "../jobs.js";
import type { Tx } from "../store.js";
import type { SqlDb } from "./dialect.js";

export class SqlJobs implements JobStore {
  constructor(private readonly db: SqlDb) {}

  // A second server claiming the same run waits for the first's row, then finds it no longer due.
  async claim(tx: Tx, name: string, nowIso: string, nextRunAt: string): Promise<boolean> {
    const changed = await this.db.run(
      tx,
      `INSERT INTO jobs (name, next_run_at) VALUES (?, ?)
       ON CONFLICT (name) DO UPDATE SET next_run_at = excluded.next_run_at WHERE jobs.next_run_at <= ?`,
      name,
      nextRunAt,
      nowIso,
    );
    return changed === 1;
  }
}
