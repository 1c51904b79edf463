import type { Reader, Store, TransactionGuard, Tx } from "../store.js";
import { SqlAgents } from "../sql/agents.js";
import { SqlArchivist } from "../sql/archivist.js";
import { SqlAuditReads } from "../sql/audit.js";
import { connect, type Db } from "./connection.js";
import { SqlCaptures } from "../sql/captures.js";
import { SqlCompile } from "../sql/compile.js";
import { SqlDecisions } from "../sql/decisions.js";
import { SqlEvents } from "../sql/events.js";
import { sqliteEventAppend } from "./events.js";
import { SqlGraph } from "../sql/graph.js";
import { SqlKnowledgeReads } from "../sql/knowledge.js";
import { sqliteDb } from "./run.js";
import { SqlBlueprints } from "../sql/blueprints.js";
import { SqlBlueprintRuns } from "../sql/blueprint-runs.js";
import { SqlHandoffs } from "../sql/handoffs.js";
import { SqlIdempotency } from "../sql/idempotency.js";
import { SqlJobs } from "../sql/jobs.js";
import { SqlLogs } from "../sql/logs.js";
import { SqliteMaintenance } from "./maintenance.js";
import { SqliteKeywordIndex, sqliteDecisionMatch } from "./keywords.js";
import { SqlMemory } from "../sql/memory.js";
import { SqlMessages } from "../sql/messages.js";
import { runMigrations } from "./migrate.js";
import { SqlOAuth } from "../sql/oauth.js";
import { SqlProjects } from "../sql/projects.js";
import { SqlTasks } from "../sql/tasks.js";
import { SqlTransfer } from "../sql/transfer.js";
import { asReader, SqliteReader, TransactionQueue } from "./transactions.js";
import { SqlUiSessions } from "../sql/ui-sessions.js";
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

  readonly agents: SqlAgents;
  readonly archivist = new SqlArchivist(sqliteDb);
  readonly audit = new SqlAuditReads(sqliteDb);
  readonly captures = new SqlCaptures(sqliteDb);
  readonly compile = new SqlCompile(sqliteDb);
  readonly decisions = new SqlDecisions(sqliteDb, sqliteDecisionMatch);
  readonly events = new SqlEvents(sqliteDb, sqliteEventAppend);
  readonly graph = new SqlGraph(sqliteDb);
  readonly knowledge = new SqlKnowledgeReads(sqliteDb);
  readonly blueprints = new SqlBlueprints(sqliteDb);
  readonly blueprintRuns = new SqlBlueprintRuns(sqliteDb);
  readonly handoffs = new SqlHandoffs(sqliteDb);
  readonly idempotency = new SqlIdempotency(sqliteDb);
  readonly jobs = new SqlJobs(sqliteDb);
  readonly keywords = new SqliteKeywordIndex();
  readonly logs = new SqlLogs(sqliteDb);
  readonly maintenance: SqliteMaintenance;
  readonly memory = new SqlMemory(sqliteDb);
  readonly messages = new SqlMessages(sqliteDb);
  readonly oauth = new SqlOAuth(sqliteDb);
  readonly projects = new SqlProjects(sqliteDb);
  readonly tasks = new SqlTasks(sqliteDb);
  readonly transfer = new SqlTransfer(sqliteDb);
  readonly uiSessions = new SqlUiSessions(sqliteDb);
  readonly vectors: SqliteVectorIndex;

  private constructor(
    private readonly writer: Db,
    private readonly readerDb: Db,
    options: SqliteStoreOptions,
  ) {
    this.reader = asReader(new SqliteReader(writer, readerDb));
    this.queue = new TransactionQueue(writer, options.onHookError ?? ((error) => queueMicrotask(() => { throw error; })));
    this.vectors = new SqliteVectorIndex((work) => this.transaction(work));
    this.agents = new SqlAgents(sqliteDb, this.vectors);
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
