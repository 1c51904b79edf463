import type { Reader, Store, TransactionGuard, Tx } from "../store.js";
import { SqliteAgents } from "./agents.js";
import { SqliteArchivist } from "./archivist.js";
import { SqliteAuditReads } from "./audit.js";
import { connect, type Db } from "./connection.js";
import { SqlCaptures } from "../sql/captures.js";
import { SqlCompile } from "../sql/compile.js";
import { SqliteDecisions } from "./decisions.js";
import { SqliteEvents } from "./events.js";
import { SqliteGraph } from "./graph.js";
import { SqlKnowledgeReads } from "../sql/knowledge.js";
import { sqliteDb } from "./run.js";
import { SqlBlueprints } from "../sql/blueprints.js";
import { SqlBlueprintRuns } from "../sql/blueprint-runs.js";
import { SqliteHandoffs } from "./handoffs.js";
import { SqliteIdempotency } from "./idempotency.js";
import { SqliteJobs } from "./jobs.js";
import { SqliteLogs } from "./logs.js";
import { SqliteMaintenance } from "./maintenance.js";
import { SqliteKeywordIndex, SqliteMemory } from "./memory.js";
import { SqliteMessages } from "./messages.js";
import { runMigrations } from "./migrate.js";
import { SqliteOAuth } from "./oauth.js";
import { SqliteProjects } from "./projects.js";
import { SqliteTasks } from "./tasks.js";
import { SqliteTransfer } from "./transfer.js";
import { asReader, SqliteReader, TransactionQueue } from "./transactions.js";
import { SqliteUiSessions } from "./ui-sessions.js";
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
export class SqliteStore implements Store {
  readonly reader: Reader;
  private readonly queue: TransactionQueue;

  readonly agents: SqliteAgents;
  readonly archivist = new SqliteArchivist();
  readonly audit = new SqliteAuditReads();
  readonly captures = new SqlCaptures(sqliteDb);
  readonly compile = new SqlCompile(sqliteDb);
  readonly decisions = new SqliteDecisions();
  readonly events = new SqliteEvents();
  readonly graph = new SqliteGraph();
  readonly knowledge = new SqlKnowledgeReads(sqliteDb);
  readonly blueprints = new SqlBlueprints(sqliteDb);
  readonly blueprintRuns = new SqlBlueprintRuns(sqliteDb);
  readonly handoffs = new SqliteHandoffs();
  readonly idempotency = new SqliteIdempotency();
  readonly jobs = new SqliteJobs();
  readonly keywords = new SqliteKeywordIndex();
  readonly logs = new SqliteLogs();
  readonly maintenance: SqliteMaintenance;
  readonly memory = new SqliteMemory();
  readonly messages = new SqliteMessages();
  readonly oauth = new SqliteOAuth();
  readonly projects = new SqliteProjects();
  readonly tasks = new SqliteTasks();
  readonly transfer = new SqliteTransfer();
  readonly uiSessions = new SqliteUiSessions();
  readonly vectors: SqliteVectorIndex;

  private constructor(
    private readonly writer: Db,
    private readonly readerDb: Db,
    options: SqliteStoreOptions,
  ) {
    this.reader = asReader(new SqliteReader(writer, readerDb));
    this.queue = new TransactionQueue(writer, options.onHookError ?? ((error) => queueMicrotask(() => { throw error; })));
    this.vectors = new SqliteVectorIndex((work) => this.transaction(work));
    this.agents = new SqliteAgents(this.vectors);
    this.maintenance = new SqliteMaintenance(readerDb, (work) => this.transaction(work));
  }

  static open(file: string, options: SqliteStoreOptions = {}): SqliteStore {
    const readonly = options.readonly ?? false;
    const writer = connect(file, { readonly });
    try {
      if (options.migrate ?? !readonly) runMigrations(writer);
      const reader = readonly ? writer : connect(file, { queryOnly: true });
      return new SqliteStore(writer, reader, options);
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
