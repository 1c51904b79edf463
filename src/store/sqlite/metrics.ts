import type { Db } from "./db.js";

/** Live entries without a vector yet: the backfill's queue (a partial index keeps this count cheap). */
export const unembeddedCount = (db: Db): number =>
  db.get<{ count: number }>("SELECT count(*) AS count FROM memory WHERE embedding_model IS NULL AND deleted_at IS NULL")?.count ?? 0;
