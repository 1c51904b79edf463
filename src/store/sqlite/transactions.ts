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

/** A group that has committed: what is left to do once its WAL frames are on disk. */
interface Committed {
  hooks: (() => void)[];
  settle: { job: Job; value: unknown }[];
}

/**
 * Transactions on the one writer connection, one at a time, with group commit: the transactions
 * queued while one group runs (or in the same turn of the event loop) share one `BEGIN IMMEDIATE …
 * COMMIT`. Each runs in its own savepoint, so one that throws rolls back alone.
 *
 * Every caller is answered only once its commit is durable. Given `syncLog`, the writer runs with
 * synchronous=NORMAL (a COMMIT appends to the WAL without waiting for the disk) and the queue makes
 * the WAL durable itself, off the main thread: `syncLog` (an fdatasync on libuv's pool) starts after
 * a group's COMMIT, and the group's hooks and answers wait for it. Groups that commit while a sync
 * is under way share the next one, and the next group's transaction runs meanwhile. Measured on
 * this class of machine, the fsync inside COMMIT held the event loop for about 15 % of a loaded
 * server's time. Without `syncLog` (an in-memory database) the COMMIT itself is the end.
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
  private readonly unsynced: Committed[] = [];
  private syncing: Promise<void> | null = null;
  /**
   * The drain and the after-commit hooks run in the context the queue was made in, not in that of
   * whichever caller happened to start a drain: a hook that starts work of its own (a backfill)
   * must not carry that caller's request context (its fencing token, its idempotency key) along.
   */
  private readonly startDrain = AsyncResource.bind(() => this.drain());
  private readonly startSync = AsyncResource.bind((sync: () => Promise<void>) => this.syncCommitted(sync));

  constructor(
    private readonly writer: Db,
    /** A hook that throws must not keep the others, or the callers' answers, from running. */
    private readonly onHookError: (error: unknown) => void,
    /** Makes every COMMIT so far durable; null when COMMIT itself is (or nothing on disk is kept). */
    private readonly syncLog: (() => Promise<void>) | null = null,
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
    while (this.draining || this.syncing) {
      await this.draining;
      await this.syncing;
    }
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
    const group: Committed = { hooks: [], settle: [] };
    const failed: { job: Job; error: unknown }[] = [];
    try {
      control(db, "BEGIN IMMEDIATE");
      for (const job of jobs) {
        const tx = new SqliteTx(db);
        if (!single) control(db, "SAVEPOINT queued");
        try {
          const value = await job.run(tx);
          tx.finish();
          if (!single) control(db, "RELEASE queued");
          group.hooks.push(...tx.hooks);
          group.settle.push({ job, value });
        } catch (error) {
          tx.finish();
          if (single) throw error;
          control(db, "ROLLBACK TO queued");
          control(db, "RELEASE queued");
          failed.push({ job, error });
        }
      }
      control(db, "COMMIT");
    } catch (error) {
      // The group did not commit: none of its writes happened.
      if (db.open && db.sqlite.inTransaction) db.exec("ROLLBACK");
      for (const job of jobs) job.reject(error);
      return;
    }
    // What rolled back wrote nothing, so its callers need not wait for the disk.
    for (const { job, error } of failed) job.reject(error);
    if (!this.syncLog) return this.finish(group, null);
    this.unsynced.push(group);
    this.syncing ??= this.startSync(this.syncLog);
  }

  /** One sync for every group committed since the last one began, then their hooks and answers, in commit order. */
  private async syncCommitted(sync: () => Promise<void>): Promise<void> {
    try {
      while (this.unsynced.length > 0) {
        const groups = this.unsynced.splice(0);
        let failure: unknown = null;
        try {
          await sync();
        } catch (error) {
          failure = error;
        }
        for (const group of groups) this.finish(group, failure);
      }
    } finally {
      this.syncing = null;
    }
  }

  /**
   * A group whose WAL could not be synced has committed (readers see it) but may not survive a
   * power loss: its callers are told it failed, as they would be of a lost connection, and the
   * failure is reported. Its hooks still run, since what they announce is in the database.
   */
  private finish(group: Committed, failure: unknown): void {
    for (const hook of group.hooks) {
      try {
        hook();
      } catch (error) {
        this.onHookError(error);
      }
    }
    if (failure !== null) {
      this.onHookError(failure);
      const error = new InternalError("io", "the write was committed but could not be made durable; it may be lost", { cause: failure });
      for (const { job } of group.settle) job.reject(error);
      return;
    }
    for (const { job, value } of group.settle) job.resolve(value);
  }
}
