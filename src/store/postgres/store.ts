import { PgAuthFailures } from "./auth-failures.js";
import pg from "pg";
import type { Reader, Store, TransactionGuard, Tx } from "../store.js";
import { PgAgents } from "./agents.js";
import { PgArchivist } from "./archivist.js";
import { PgAuditReads } from "./audit.js";
import { PgDb } from "./connection.js";
import { SqlCaptures } from "../sql/captures.js";
import { SqlCompile } from "../sql/compile.js";
import { PgDecisions } from "./decisions.js";
import { PgEvents } from "./events.js";
import { PgGraph } from "./graph.js";
import { SqlKnowledgeReads } from "../sql/knowledge.js";
import { pgDb } from "./run.js";
import { SqlBlueprints } from "../sql/blueprints.js";
import { SqlBlueprintRuns } from "../sql/blueprint-runs.js";
import { PgHandoffs } from "./handoffs.js";
import { PgIdempotency } from "./idempotency.js";
import { PgJobs } from "./jobs.js";
import { PgLogs } from "./logs.js";
import { PgMaintenance } from "./maintenance.js";
import { PgKeywordIndex, PgMemory } from "./memory.js";
import { PgMessages } from "./messages.js";
import { runMigrations } from "./migrate.js";
import { PgOAuth } from "./oauth.js";
import { PgProjects } from "./projects.js";
import { PgRateLimits } from "./rate-limits.js";
import { PgTasks } from "./tasks.js";
import { PgTransfer } from "./transfer.js";
import { readerOf, runTransaction } from "./transactions.js";
import { PgUiSessions } from "./ui-sessions.js";
import { PgVectorIndex } from "./vectors.js";
import { PgEventWakeups } from "./wakeups.js";

export interface PgStoreOptions {
  /** Apply pending migrations (default true). */
  migrate?: boolean;
  /** Where a failing after-commit hook is reported. */
  onHookError?: (error: unknown) => void;
  /** Connections this process keeps at most (default 20). */
  poolSize?: number;
}

/**
 * PostgreSQL with pgvector, shared by any number of server processes: a pool of connections for
 * reads and transactions, one more connection listening for the events other processes commit.
 */
export class PgStore implements Store {
  readonly reader: Reader;
  readonly eventWakeups: PgEventWakeups;
  readonly rateLimits: PgRateLimits;
  readonly authFailures: PgAuthFailures;
  private readonly guards: TransactionGuard[] = [];
  private closed = false;

  readonly agents = new PgAgents();
  readonly archivist = new PgArchivist();
  readonly audit = new PgAuditReads();
  readonly captures = new SqlCaptures(pgDb);
  readonly compile = new SqlCompile(pgDb);
  readonly decisions = new PgDecisions();
  readonly events = new PgEvents();
  readonly graph = new PgGraph();
  readonly knowledge = new SqlKnowledgeReads(pgDb);
  readonly blueprints = new SqlBlueprints(pgDb);
  readonly blueprintRuns = new SqlBlueprintRuns(pgDb);
  readonly handoffs = new PgHandoffs();
  readonly idempotency = new PgIdempotency();
  readonly jobs = new PgJobs();
  readonly keywords = new PgKeywordIndex();
  readonly logs = new PgLogs();
  readonly maintenance: PgMaintenance;
  readonly memory = new PgMemory();
  readonly messages = new PgMessages();
  readonly oauth = new PgOAuth();
  readonly projects = new PgProjects();
  readonly tasks = new PgTasks();
  readonly transfer = new PgTransfer();
  readonly uiSessions = new PgUiSessions();
  readonly vectors: PgVectorIndex;

  private constructor(
    private readonly pool: pg.Pool,
    url: string,
    private readonly onHookError: (error: unknown) => void,
  ) {
    this.reader = readerOf(pool);
    this.eventWakeups = new PgEventWakeups({ connectionString: url });
    this.rateLimits = new PgRateLimits(new PgDb(pool));
    this.authFailures = new PgAuthFailures(new PgDb(pool));
    this.vectors = new PgVectorIndex((work) => this.transaction(work));
    this.maintenance = new PgMaintenance(pool, url);
  }

  static async open(url: string, options: PgStoreOptions = {}): Promise<PgStore> {
    const pool = new pg.Pool({ connectionString: url, max: options.poolSize ?? 20 });
    // An idle connection that fails (the server restarted) is dropped by the pool; without a
    // listener its error would end the process.
    pool.on("error", () => undefined);
    try {
      if (options.migrate ?? true) await runMigrations(pool);
      else await pool.query("SELECT 1");
    } catch (error) {
      await pool.end();
      throw error;
    }
    const rethrow = (error: unknown): void =>
      queueMicrotask(() => {
        throw error;
      });
    return new PgStore(pool, url, options.onHookError ?? rethrow);
  }

  transaction<T>(work: (tx: Tx) => Promise<T>): Promise<T> {
    return runTransaction(this.pool, this.guards, work, this.onHookError);
  }

  addGuard(guard: TransactionGuard): void {
    this.guards.push(guard);
  }

  get open(): boolean {
    return !this.closed;
  }

  async ping(): Promise<boolean> {
    try {
      await this.pool.query("SELECT 1");
      return true;
    } catch {
      return false;
    }
  }

  async close(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    await this.eventWakeups.close();
    await this.pool.end();
  }
}
