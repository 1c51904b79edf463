import type { Reader, Store, TransactionGuard, Tx } from "../store.js";
import { SqlRepositories } from "../sql/repositories.js";
import { ANN_DEFAULTS, SqliteAnn, type AnnSettings } from "./ann.js";
import { BitMirror, mirrorMaxRows } from "./bit-mirror.js";
import { connect, type Db } from "./connection.js";
import { WalCheckpoints } from "./checkpoints.js";
import { walSync, type WalSync } from "./durability.js";
import { sqliteEventAppend } from "./events.js";
import { SqliteKeywordIndex, sqliteDecisionMatch } from "./keywords.js";
import { SqliteMaintenance } from "./maintenance.js";
import { runMigrations } from "./migrate.js";
import { sqliteDb } from "./run.js";
import { asReader, connectionOf, SqliteReader, TransactionQueue } from "./transactions.js";
import { SqliteVectorIndex } from "./vectors.js";

export interface SqliteStoreOptions {
  /** Open an existing database for reading only (no writes, no migrations). */
  readonly?: boolean;
  /** Apply pending migrations (default: unless read-only). */
  migrate?: boolean;
  /** Where a failing after-commit hook is reported. */
  onHookError?: (error: unknown) => void;
  /**
   * The in-memory indexes beside the database, the HNSW index (ann.ts) and the bit mirror
   * (bit-mirror.ts): the HNSW's settings to override (tests lower `threshold` to exercise it on a
   * small store), or false (the default) for neither. A read-only store never has them.
   */
  ann?: Partial<AnnSettings> | false;
  /** Where a failure of the HNSW index's background work is reported (searches fall back to the scan). */
  onAnnError?: (error: unknown) => void;
  /**
   * Checkpoint the WAL in a worker thread (checkpoints.ts), reporting a failure here (the writer
   * then checkpoints as SQLite does by itself); unset, SQLite checkpoints inside a commit.
   */
  onCheckpointError?: (error: unknown) => void;
}

const pruneChanges = async (transact: <T>(work: (tx: Tx) => Promise<T>) => Promise<T>, through: number): Promise<void> => {
  await transact((tx) => {
    const db = connectionOf(tx);
    db.run("DELETE FROM vector_changes WHERE seq <= ?", through);
    db.run(
      `INSERT INTO meta (key, value) VALUES ('vector_changes_pruned', ?)
       ON CONFLICT (key) DO UPDATE SET value = CAST(max(CAST(value AS INTEGER), CAST(excluded.value AS INTEGER)) AS TEXT)`,
      String(through),
    );
    return Promise.resolve();
  });
};

/**
 * SQLite in one file: one writer connection that runs every transaction (`TransactionQueue`), and
 * a second connection for reads outside transactions, which WAL lets see only what is committed
 * while a write is in progress.
 */
export class SqliteStore extends SqlRepositories<SqliteVectorIndex> implements Store {
  readonly reader: Reader;
  readonly maintenance: SqliteMaintenance;

  private constructor(
    private readonly writer: Db,
    private readonly readerDb: Db,
    private readonly queue: TransactionQueue,
    file: string,
    options: SqliteStoreOptions,
    private readonly wal: WalSync | null,
    private readonly checkpoints: WalCheckpoints | null,
  ) {
    const transact = <T>(work: (tx: Tx) => Promise<T>): Promise<T> => queue.run(work);
    // The in-memory indexes come together: a server asks for them (`ann`), a one-shot command does not.
    const indexed = !(options.ann === undefined || options.ann === false || options.readonly || file === ":memory:");
    const annSettings = { ...ANN_DEFAULTS, ...options.ann };
    const reader = asReader(new SqliteReader(writer, readerDb));
    const ann = indexed ? new SqliteAnn(file, reader, annSettings, (through) => pruneChanges(transact, through), options.onAnnError ?? (() => undefined)) : null;
    const mirror = indexed ? new BitMirror(reader, options.onAnnError ?? (() => undefined), { maxRows: mirrorMaxRows(annSettings.threshold) }) : null;
    super({
      db: sqliteDb,
      vectors: new SqliteVectorIndex(transact, ann, mirror),
      keywords: new SqliteKeywordIndex(),
      decisionMatch: sqliteDecisionMatch,
      eventAppend: sqliteEventAppend,
    });
    this.reader = reader;
    this.maintenance = new SqliteMaintenance(readerDb, transact);
  }

  static open(file: string, options: SqliteStoreOptions = {}): SqliteStore {
    const readonly = options.readonly ?? false;
    const writer = connect(file, { readonly });
    try {
      if (options.migrate ?? !readonly) runMigrations(writer);
      const reader = readonly ? writer : connect(file, { queryOnly: true });
      const wal = walSync(writer, file);
      const checkpoints = wal && options.onCheckpointError ? WalCheckpoints.start(writer, file, options.onCheckpointError) : null;
      const syncLog = wal
        ? async () => {
            await wal.sync();
            checkpoints?.committed();
          }
        : null;
      const queue = new TransactionQueue(writer, options.onHookError ?? ((error) => queueMicrotask(() => { throw error; })), syncLog);
      const store = new SqliteStore(writer, reader, queue, file, options, wal, checkpoints);
      // A large store's HNSW index starts loading (or building, in its worker) now, not at the first
      // search. The bit mirror's copy, a page per turn of this thread, waits for `warm` (a server
      // calls it once it listens and its model has loaded) or the first scan.
      void store.vectors.annReady().catch(options.onAnnError ?? (() => undefined));
      return store;
    } catch (error) {
      writer.close();
      throw error;
    }
  }

  transaction<T>(work: (tx: Tx) => Promise<T>): Promise<T> {
    return this.queue.run(work);
  }

  addGuard(guard: TransactionGuard): void {
    this.queue.addGuard(guard);
  }

  get open(): boolean {
    return this.writer.open;
  }

  ping(): Promise<boolean> {
    try {
      return Promise.resolve(this.readerDb.open && this.readerDb.get("SELECT 1 AS ok") !== undefined);
    } catch {
      return Promise.resolve(false);
    }
  }

  async close(): Promise<void> {
    if (!this.writer.open) return;
    // Saves the HNSW index and prunes the log it holds, which takes a transaction.
    await this.vectors.closeIndexes();
    await this.queue.idle();
    await this.checkpoints?.close();
    this.wal?.close();
    if (this.readerDb !== this.writer) this.readerDb.close();
    try {
      if (!this.writer.sqlite.readonly) this.writer.sqlite.pragma("wal_checkpoint(TRUNCATE)");
    } finally {
      this.writer.close();
    }
  }
}
