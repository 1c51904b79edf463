import type { Store } from "./store.js";
import { SqliteStore } from "./sqlite/store.js";

export interface OpenStoreOptions {
  /** Apply pending migrations (default true). */
  migrate?: boolean;
  /** Where a failing after-commit hook is reported. */
  onHookError?: (error: unknown) => void;
}

/** The one place that chooses an implementation of the store: services never name one. */
export function openStore(file: string, options: OpenStoreOptions = {}): Store {
  return SqliteStore.open(file, options);
}
