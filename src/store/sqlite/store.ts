import type { Reader, Store, TransactionGuard, Tx } from "../store.js";
import { SqlRepositories } from "../sql/repositories.js";
import { connect, type Db } from "./connection.js";
import { sqliteEventAppend } from "./events.js";
import { SqliteKeywordIndex, sqliteDecisionMatch } from "./keywords.js";
import { SqliteMaintenance } from "./maintenance.js";
import { runMigrations } from "./migrate.js";
import { sqliteDb } from "./run.js";
import { asReader, SqliteReader, TransactionQueue } from "./transactions.js";
import { SqliteVectorIndex } from "./vectors.js";

export interface SqliteStoreOptions {
  /** Open an existing database for reading only (no writes, no migrations). */
  readonly?: boolean;
  /** Apply pending migrations (default: unless read-only). */
  migrate?: boolean;
  /** Where a failing after-commit hook is reported. */
  onHookError?: (error: unknown) => void;
}

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
  ) {
    const transact = <T>(work: (tx: Tx) => Promise<T>): Promise<T> => queue.run(work);
    super({
      db: sqliteDb,
      vectors: new SqliteVectorIndex(transact),
      keywords: new SqliteKeywordIndex(),
      decisionMatch: sqliteDecisionMatch,
      eventAppend: sqliteEventAppend,
    });
    this.reader = asReader(new SqliteReader(writer, readerDb));
    this.maintenance = new SqliteMaintenance(readerDb, transact);
  }

  static open(file: string, options: SqliteStoreOptions = {}): SqliteStore {
    const readonly = options.readonly ?? false;
    const writer = connect(file, { readonly });
    try {
      if (options.migrate ?? !readonly) runMigrations(writer);
      const reader = readonly ? writer : connect(file, { queryOnly: true });
      const queue = new TransactionQueue(writer, options.onHookError ?? ((error) => queueMicrotask(() => { throw error; })));
      return new SqliteStore(writer, reader, queue);
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
    await this.queue.idle();
    if (this.readerDb !== this.writer) this.readerDb.close();
    try {
      if (!this.writer.sqlite.readonly) this.writer.sqlite.pragma("wal_checkpoint(TRUNCATE)");
    } finally {
      this.writer.close();
    }
  }
}
