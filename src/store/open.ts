import type { AnnSettings } from "./sqlite/ann.js";
import type { Store } from "./store.js";

// Each backend is loaded when a store of its kind opens: a SQLite server never loads pg, and the
// other way round.
const postgres = async () => (await import("./postgres/store.js")).PgStore;
const sqlite = async () => (await import("./sqlite/store.js")).SqliteStore;

export interface OpenStoreOptions {
  /** PostgreSQL's URL; unset: SQLite in `file`. */
  databaseUrl?: string | undefined;
  /** The SQLite file, when there is no `databaseUrl`. */
  file: string;
  /** Apply pending migrations (default true). */
  migrate?: boolean;
  /** Where a failing after-commit hook is reported. */
  onHookError?: (error: unknown) => void;
  /** SQLite only: keep an HNSW index beside a large store (the server does; one-off commands need not). */
  ann?: Partial<AnnSettings>;
  /** Where a failure of the HNSW index's background work is reported. */
  onAnnError?: (error: unknown) => void;
  /**
   * SQLite only: checkpoint the WAL in a worker thread (the server does), reporting a failure
   * here; unset, SQLite checkpoints inside a commit, as one-off commands may.
   */
  onCheckpointError?: (error: unknown) => void;
}

/** The one place that chooses an implementation of the store: services never name one. */
export async function openStore(options: OpenStoreOptions): Promise<Store> {
  const { databaseUrl, file, ann, onAnnError, onCheckpointError, ...rest } = options;
  if (databaseUrl !== undefined) return (await postgres()).open(databaseUrl, rest);
  return (await sqlite()).open(file, { ...rest, ann: ann ?? false, ...(onAnnError ? { onAnnError } : {}), ...(onCheckpointError ? { onCheckpointError } : {}) });
}

/** Where a store lives: PostgreSQL's URL, else the SQLite file. */
export interface StoreSource {
  databaseUrl?: string | undefined;
  file: string;
}

/**
 * A second, read-only way into a store another part of the process opened (and migrated): for a
 * worker thread that reads on a connection of its own, so its queries never run on the server's.
 */
export async function openReadOnlyStore(source: StoreSource): Promise<Store> {
  // Its reads are no vector searches: nothing to keep warm, its connections close when idle.
  if (source.databaseUrl !== undefined) return (await postgres()).open(source.databaseUrl, { migrate: false, poolSize: 2, keepOpen: 0 });
  return (await sqlite()).open(source.file, { readonly: true, migrate: false });
}

/** Whether SQLite's native module and vector extension load here: null, or the cause and the remedy. */
export { sqliteLoadProblem } from "./sqlite/native.js";
