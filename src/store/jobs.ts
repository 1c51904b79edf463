import type { Tx } from "./store.js";

/** Background work that must run once per interval however many server processes share the store. */
export interface JobStore {
  /**
   * Claims the job's next run: true (and the next run moves to `nextRunAt`) when it was due at
   * `nowIso`, false when another process has claimed this interval.
   */
  claim(tx: Tx, name: string, nowIso: string, nextRunAt: string): Promise<boolean>;
}
