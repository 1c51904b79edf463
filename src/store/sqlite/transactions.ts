import { AsyncResource } from "node:async_hooks";
import { setImmediate as nextTurn } from "node:timers/promises";
import { InternalError } from "../../core/errors.js";
import type { Reader, TransactionGuard, Tx } from "../store.js";
import type { Db } from "./connection.js";

/** A handle on a connection: what SQLite's repositories run their statements on. */
abstract class Handle {
  abstract readonly db: Db;
}

/**
 * Reads of what is committed. Between transactions that is the writer itself, whose page cache is
 * warm with what it just wrote; while a transaction is open on it (its work awaits, so other
 * requests run meanwhile) the second, query-only connection, which under WAL sees only committed
 * data. Always the reader would cost its cache after every commit: measured, the key check's read
 * took half as long again.
 */
export class SqliteReader extends Handle {
  constructor(
    private readonly writer: Db,
    private readonly reader: Db,
  ) {
    super();
  }

  get db(): Db {
    return this.writer.open && this.writer.sqlite.inTransaction ? this.reader : this.writer;
  }
}

class SqliteTx extends Handle {
  hooks: (() => void)[] = [];
  private finished = false;
  private savepoints = 0;

  constructor(private readonly writer: Db) {
    super();
  }

  get db(): Db {
    // A Tx kept past its transaction would write into whichever transaction runs next.
    if (this.finished) throw new InternalError("invariant", "a transaction was used after it ended");
    return this.writer;
  }

  finish(): void {
    this.finished = true;
  }

  afterCommit(hook: () => void): void {
    this.hooks.push(hook);
  }

  // One writer runs one transaction at a time: nothing else holds any lock meanwhile.
  lock(_name: string): Promise<void> {
    return Promise.resolve();
  }

  async savepoint<T>(work: (tx: Tx) => Promise<T>): Promise<T> {
    const name = `nested_${++this.savepoints}`;
    const outer = this.hooks;
    this.hooks = [];
    this.db.exec(`SAVEPOINT ${name}`);
    try {
      const result = await work(asTx(this));
      this.db.exec(`RELEASE ${name}`);
      // Appended in place: copying the outer list at every savepoint made a transaction of n
      // savepoints (a dry run of an import, one per line) cost n²: 100,000 lines had not finished in 15 minutes.
      for (const hook of this.hooks) outer.push(hook);
      this.hooks = outer;
      return result;
    } catch (error) {
      this.db.exec(`ROLLBACK TO ${name}`);
      this.db.exec(`RELEASE ${name}`);
      this.hooks = outer;
      throw error;
    }
  }
}

// The brands of Reader and Tx exist only in types: these handles are what SQLite's Reader and Tx are.
const asTx = (tx: SqliteTx): Tx => tx as unknown as Tx;
export const asReader = (reader: SqliteReader): Reader => reader as unknown as Reader;

/** The connection behind a Reader or Tx that this implementation handed out. */
export const connectionOf = (handle: Reader): Db => (handle as unknown as Handle).db;

/**
 * A transaction-control statement of the queue, from the connection's prepared statements: `exec`
 * parses the SQL again every time, and a group runs two of them and two more per transaction in it.
 */
const control = (db: Db, sql: string): void => void db.prepare(sql).run();

interface Job {
  run: (tx: SqliteTx) => Promise<unknown>;
  resolve: (value: unknown) => void;
  reject: (error: unknown) => void;
}

/**
 * Transactions on the one writer connection, one at a time, with group commit: the transactions
 * queued while one group runs (or in the same turn of the event loop) share one `BEGIN IMMEDIATE …
 * COMMIT`, so one fsync (synchronous=FULL) serves them all. Each runs in its own savepoint, so one
 * that throws rolls back alone; every caller is answered only after the commit, so nothing is
 * acknowledged before it is durable. Measured on this class of machine, the fsync was half of a
 * write's time under concurrent load.
 *
 * Nothing here uses AsyncLocalStorage: once any is entered, Node 20 hooks every promise the
 * process makes, which cost the message routes 8–15 % when this queue used one to refuse nested
 * transactions (measured). A nested `transaction()` call would wait for its outer one for ever;
 * the contract says to pass the `Tx` on instead.
 */
export class TransactionQueue {
  private readonly queued: Job[] = [];
  private readonly guards: TransactionGuard[] = [];
  private draining: Promise<void> | null = null;
  /**
   * The drain and the after-commit hooks run in the context the queue was made in, not in that of
   * whichever caller happened to start a drain: a hook that starts work of its own (a backfill)
   * must not carry that caller's request context (its fencing token, its idempotency key) along.
   */
  private readonly startDrain = AsyncResource.bind(() => this.drain());

  constructor(
    private readonly writer: Db,
    /** A hook that throws must not keep the others, or the callers' answers, from running. */
    private readonly onHookError: (error: unknown) => void,
  ) {}

  addGuard(guard: TransactionGuard): void {
    this.guards.push(guard);
  }

  run<T>(work: (tx: Tx) => Promise<T>): Promise<T> {
    if (!this.writer.open) return Promise.reject(new InternalError("invariant", "the store is closed"));
    return new Promise<T>((resolve, reject) => {
      // Bound to the caller's async context, so whatever that carries (a fencing token) is in force
      // while its work and the guards run inside the shared transaction.
      const run = AsyncResource.bind(async (tx: SqliteTx) => {
        const result = await work(asTx(tx));
        for (const guard of this.guards) await guard(asTx(tx), result);
        return result;
      });
      this.queued.push({ run, resolve: resolve as (value: unknown) => void, reject });
      this.draining ??= this.startDrain();
    });
  }

  /** Resolves once every queued transaction has settled. */
  async idle(): Promise<void> {
    while (this.draining) await this.draining;
  }

  private async drain(): Promise<void> {
    try {
      // Let the rest of this turn queue its transactions too: they join the group.
      await nextTurn();
      while (this.queued.length > 0) await this.commitGroup(this.queued.splice(0));
    } finally {
      this.draining = null;
    }
  }

  private async commitGroup(jobs: Job[]): Promise<void> {
    const db = this.writer;
    const single = jobs.length === 1;
    const hooks: (() => void)[] = [];
    const settle: (() => void)[] = [];
    try {
      control(db, "BEGIN IMMEDIATE");
      for (const job of jobs) {
        const tx = new SqliteTx(db);
        if (!single) control(db, "SAVEPOINT queued");
        try {
          const value = await job.run(tx);
          tx.finish();
          if (!single) control(db, "RELEASE queued");
          hooks.push(...tx.hooks);
          settle.push(() => job.resolve(value));
        } catch (error) {
          tx.finish();
          if (single) throw error;
          control(db, "ROLLBACK TO queued");
          control(db, "RELEASE queued");
          settle.push(() => job.reject(error));
        }
      }
      control(db, "COMMIT");
    } catch (error) {
      // The group did not commit: none of its writes happened.
      if (db.open && db.sqlite.inTransaction) db.exec("ROLLBACK");
      for (const job of jobs) job.reject(error);
      return;
    }
    for (const hook of hooks) {
      try {
        hook();
      } catch (error) {
        this.onHookError(error);
      }
    }
    for (const done of settle) done();
  }
}
