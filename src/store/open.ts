import type { Store } from "./store.js";
import { PgStore } from "./postgres/store.js";
import { SqliteStore } from "./sqlite/store.js";

export interface OpenStoreOptions {
  /** PostgreSQL's URL; unset: SQLite in `file`. */
  databaseUrl?: string | undefined;
  /** The SQLite file, when there is no `databaseUrl`. */
  file: string;
  /** Apply pending migrations (default true). */
  migrate?: boolean;
  /** Where a failing after-commit hook is reported. */
  onHookError?: (error: unknown) => void;
}

/** The one place that chooses an implementation of the store: services never name one. */
export async function openStore(options: OpenStoreOptions): Promise<Store> {
  const { databaseUrl, file, ...rest } = options;
  if (databaseUrl !== undefined) return PgStore.open(databaseUrl, rest);
  return SqliteStore.open(file, rest);
}
