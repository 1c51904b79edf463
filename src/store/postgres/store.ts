import { PgAuthFailures } from "./auth-failures.js";
import { AsyncResource } from "node:async_hooks";
import pg from "pg";
import type { LockHolds, Reader, Store, TransactionGuard, Tx } from "../store.js";
import { SqlAgents } from "../sql/agents.js";
import { SqlArchivist } from "../sql/archivist.js";
import { SqlAuditReads } from "../sql/audit.js";
import { PgDb } from "./connection.js";
import { SqlCaptures } from "../sql/captures.js";
import { SqlCompile } from "../sql/compile.js";
import { SqlDecisions } from "../sql/decisions.js";
import { SqlEvents } from "../sql/events.js";
import { pgEventAppend } from "./events.js";
import { SqlGraph } from "../sql/graph.js";
import { SqlKnowledgeReads } from "../sql/knowledge.js";
import { pgDb } from "./run.js";
import { SqlBlueprints } from "../sql/blueprints.js";
import { SqlBlueprintRuns } from "../sql/blueprint-runs.js";
import { SqlHandoffs } from "../sql/handoffs.js";
import { SqlIdempotency } from "../sql/idempotency.js";
import { SqlJobs } from "../sql/jobs.js";
import { SqlLogs } from "../sql/logs.js";
import { PgMaintenance } from "./maintenance.js";
import { PgKeywordIndex, pgDecisionMatch } from "./keywords.js";
import { SqlMemory } from "../sql/memory.js";
import { SqlMessages } from "../sql/messages.js";
import { runMigrations } from "./migrate.js";
import { SqlOAuth } from "../sql/oauth.js";
import { SqlProjects } from "../sql/projects.js";
import { PgRateLimits } from "./rate-limits.js";
import { SqlTasks } from "../sql/tasks.js";
import { SqlTransfer } from "../sql/transfer.js";
import { readerOf, runTransaction } from "./transactions.js";
import { SqlUiSessions } from "../sql/ui-sessions.js";
import { PgVectorIndex } from "./vectors.js";
import { PgEventWakeups } from "./wakeups.js";

/** Who is told each hold of the events' lock. */
class HoldListeners implements LockHolds {
  private readonly listeners = new Set<(seconds: number) => void>();

  onHeld(listener: (seconds: number) => void): () => void {
    this.listeners.add(listener);
    return () => this.listeners.delete(listener);
  }

  readonly report = (seconds: number): void => {
    for (const listener of this.listeners) listener(seconds);
  };
}

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
  // Made with the store, outside any request: after-commit hooks run here (see runTransaction).
  private readonly hookScope = new AsyncResource("cairn:after-commit");
  private readonly lockHolds = new HoldListeners();
  readonly eventsLock: LockHolds = this.lockHolds;

  readonly agents: SqlAgents;
  readonly archivist = new SqlArchivist(pgDb);
  readonly audit = new SqlAuditReads(pgDb);
  readonly captures = new SqlCaptures(pgDb);
  readonly compile = new SqlCompile(pgDb);
  readonly decisions = new SqlDecisions(pgDb, pgDecisionMatch);
  readonly events = new SqlEvents(pgDb, pgEventAppend);
  readonly graph = new SqlGraph(pgDb);
  readonly knowledge = new SqlKnowledgeReads(pgDb);
  readonly blueprints = new SqlBlueprints(pgDb);
  readonly blueprintRuns = new SqlBlueprintRuns(pgDb);
  readonly handoffs = new SqlHandoffs(pgDb);
  readonly idempotency = new SqlIdempotency(pgDb);
  readonly jobs = new SqlJobs(pgDb);
  readonly keywords = new PgKeywordIndex();
  readonly logs = new SqlLogs(pgDb);
  readonly maintenance: PgMaintenance;
  readonly memory = new SqlMemory(pgDb);
  readonly messages = new SqlMessages(pgDb);
  readonly oauth = new SqlOAuth(pgDb);
  readonly projects = new SqlProjects(pgDb);
  readonly tasks = new SqlTasks(pgDb);
  readonly transfer = new SqlTransfer(pgDb);
  readonly uiSessions = new SqlUiSessions(pgDb);
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
    // The shared rate limit (PostgreSQL only) follows the agent, so a rename does not refill it.
    this.agents = new SqlAgents(pgDb, this.vectors, [["rate_buckets", "agent_id"]]);
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
    return runTransaction(this.pool, this.guards, work, this.onHookError, this.hookScope, this.lockHolds.report);
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
