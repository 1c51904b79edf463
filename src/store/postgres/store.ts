import { AsyncResource } from "node:async_hooks";
import { randomBytes } from "node:crypto";
import pg from "pg";
import { SqlRepositories } from "../sql/repositories.js";
import type { LockHolds, Reader, Store, TransactionGuard, Tx } from "../store.js";
import { PgAuthFailures } from "./auth-failures.js";
import { PgDb } from "./connection.js";
import { pgEventAppend } from "./events.js";
import { PgKeywordIndex, pgDecisionMatch } from "./keywords.js";
import { PgMaintenance } from "./maintenance.js";
import { runMigrations } from "./migrate.js";
import { openFailure } from "./open-errors.js";
import { PgRateLimits } from "./rate-limits.js";
import { pgDb } from "./run.js";
import { readerOf, runTransaction } from "./transactions.js";
import { CONNECTION_SEARCH_SETTINGS, PgVectorIndex } from "./vectors.js";
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

/** Connections a server's pool keeps open while idle: about what one search uses at once (keyword query, vector query, rows, read counts). */
const WARM_CONNECTIONS = 4;

export interface PgStoreOptions {
  /** Apply pending migrations (default true). */
  migrate?: boolean;
  /** Where a failing after-commit hook is reported. */
  onHookError?: (error: unknown) => void;
  /** Connections this process keeps at most (default 20). */
  poolSize?: number;
  /** Connections kept open however long they are idle (default 4; at most `poolSize`). */
  keepOpen?: number;
}

/**
 * PostgreSQL with pgvector, shared by any number of server processes: a pool of connections for
 * reads and transactions, one more connection listening for the events other processes commit.
 */
export class PgStore extends SqlRepositories<PgVectorIndex> implements Store {
  readonly reader: Reader;
  readonly eventWakeups: PgEventWakeups;
  readonly rateLimits: PgRateLimits;
  readonly authFailures: PgAuthFailures;
  readonly maintenance: PgMaintenance;
  readonly eventsLock: LockHolds;
  private readonly guards: TransactionGuard[];
  private readonly run: <T>(work: (tx: Tx) => Promise<T>) => Promise<T>;
  private closed = false;

  private constructor(
    private readonly pool: pg.Pool,
    url: string,
    onHookError: (error: unknown) => void,
  ) {
    const guards: TransactionGuard[] = [];
    // Made with the store, outside any request: after-commit hooks run here (see runTransaction).
    const hookScope = new AsyncResource("cairn:after-commit");
    const holds = new HoldListeners();
    const run = <T>(work: (tx: Tx) => Promise<T>): Promise<T> => runTransaction(pool, guards, work, onHookError, hookScope, holds.report);
    const reader = readerOf(pool);
    const sender = randomBytes(8).toString("hex");
    super({
      db: pgDb,
      vectors: new PgVectorIndex(run),
      keywords: new PgKeywordIndex(reader),
      decisionMatch: pgDecisionMatch,
      eventAppend: pgEventAppend(sender),
      // The shared rate limit (PostgreSQL only) follows the agent, so a rename does not refill it.
      agentColumns: [["rate_buckets", "agent_id"]],
    });
    this.guards = guards;
    this.run = run;
    this.eventsLock = holds;
    this.reader = reader;
    this.eventWakeups = new PgEventWakeups({ connectionString: url }, sender);
    this.rateLimits = new PgRateLimits(new PgDb(pool));
    this.authFailures = new PgAuthFailures(new PgDb(pool));
    this.maintenance = new PgMaintenance(pool, url);
  }

  static async open(url: string, options: PgStoreOptions = {}): Promise<PgStore> {
    // A backend's first vector searches are slow: it maps each shared buffer it touches into its own
    // memory, a page fault per 4 KB page of the HNSW index (measured: a new backend's first ten
    // searches took 2–4 times as long as the same searches once it was warm). So a few connections
    // stay open however long the server is idle (pg's default closes every idle one after 10 s, so
    // a server searched less often than that searched on a new backend every time), and the rest of
    // a burst's connections stay a minute.
    const max = options.poolSize ?? 20;
    // Every connection opens with the search settings (CONNECTION_SEARCH_SETTINGS), given in its
    // startup packet: no statement of its own, and nothing queued beside the pool's first query.
    // Before pgvector loads in a session they are placeholders, which take effect when it does; a
    // pgvector older than 0.8 drops `hnsw.iterative_scan` with a warning, and its searches set
    // their own (`searchSettings`).
    const pool = new pg.Pool({ ...withStartupSettings(url, CONNECTION_SEARCH_SETTINGS), max, min: Math.min(max, options.keepOpen ?? WARM_CONNECTIONS), idleTimeoutMillis: 60_000 });
    // An idle connection that fails (the server restarted) is dropped by the pool; without a
    // listener its error would end the process.
    pool.on("error", () => undefined);
    try {
      if (options.migrate ?? true) await runMigrations(pool);
      else await pool.query("SELECT 1");
    } catch (error) {
      await pool.end();
      throw openFailure(url, error);
    }
    const rethrow = (error: unknown): void =>
      queueMicrotask(() => {
        throw error;
      });
    return new PgStore(pool, url, options.onHookError ?? rethrow);
  }

  transaction<T>(work: (tx: Tx) => Promise<T>): Promise<T> {
    return this.run(work);
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

/**
 * The pool's connection string and `options` (the startup packet's `-c name=value` settings):
 * `settings` after any the URL gives in its own `options`, which pg would otherwise let override
 * them all.
 */
function withStartupSettings(url: string, settings: Readonly<Record<string, string>>): { connectionString: string; options: string } {
  const ours = Object.entries(settings).map(([name, value]) => `-c ${name}=${value}`);
  let parsed: URL | null = null;
  try {
    parsed = new URL(url);
  } catch {
    // Not a URL: pg reads the string as given, with our options beside it.
  }
  const given = parsed?.searchParams.get("options") ?? null;
  if (parsed === null || given === null) return { connectionString: url, options: ours.join(" ") };
  parsed.searchParams.delete("options");
  return { connectionString: parsed.toString(), options: [given, ...ours].join(" ") };
}
