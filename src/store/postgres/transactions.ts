import type { AsyncResource } from "node:async_hooks";
import type pg from "pg";
import { InternalError } from "../../core/errors.js";
import { ConstraintViolation, type Reader, type TransactionGuard, type Tx } from "../store.js";
import { PgDb } from "./connection.js";

/** A handle on a connection: what PostgreSQL's repositories run their statements on. */
abstract class Handle {
  abstract readonly db: PgDb;
}

/** Reads of what is committed: any connection of the pool, outside a transaction. */
class PgReader extends Handle {
  constructor(
    readonly db: PgDb,
    /** The pool `db` runs on, for reads that need a transaction of their own (`withSettings`). */
    readonly pool: pg.Pool,
  ) {
    super();
  }
}

class PgTx extends Handle {
  hooks: (() => void)[] = [];
  private finished = false;
  private savepoints = 0;
  private held = new Set<string>();
  /** Set once the transaction wrote an event: the events' lock is held until it ends. */
  eventsLocked = false;
  /** When the events' lock was taken (performance.now()), for the hold time. */
  eventsLockedAt: number | null = null;

  constructor(private readonly connection: PgDb) {
    super();
  }

  get db(): PgDb {
    if (this.finished) throw new InternalError("invariant", "a transaction was used after it ended");
    return this.connection;
  }

  finish(): void {
    this.finished = true;
  }

  afterCommit(hook: () => void): void {
    this.hooks.push(hook);
  }

  async lock(name: string): Promise<void> {
    if (this.held.has(name)) return;
    await this.db.run("SELECT pg_advisory_xact_lock(hashtextextended(?, 0))", name);
    this.held.add(name);
  }

  /** Records a lock taken by a statement of a repository's own (as `lock` takes it), so `lock` knows it is held. */
  holdLock(name: string): void {
    this.held.add(name);
  }

  async savepoint<T>(work: (tx: Tx) => Promise<T>): Promise<T> {
    const name = `nested_${++this.savepoints}`;
    const outer = this.hooks;
    // Rolling back to a savepoint releases the advisory locks and drops the notifications taken
    // after it: what this transaction holds goes back to what it held before.
    const held = new Set(this.held);
    const eventsLocked = this.eventsLocked;
    const eventsLockedAt = this.eventsLockedAt;
    this.hooks = [];
    await this.db.exec(`SAVEPOINT ${name}`);
    try {
      const result = await work(asTx(this));
      await this.db.exec(`RELEASE ${name}`);
      // Appended in place: copying the outer list at every savepoint made a transaction of n
      // savepoints (a dry run of an import, one per line) cost n²: 100,000 lines had not finished in 15 minutes.
      for (const hook of this.hooks) outer.push(hook);
      this.hooks = outer;
      return result;
    } catch (error) {
      await this.db.exec(`ROLLBACK TO ${name}`);
      await this.db.exec(`RELEASE ${name}`);
      this.hooks = outer;
      this.held = held;
      this.eventsLocked = eventsLocked;
      this.eventsLockedAt = eventsLockedAt;
      throw error;
    }
  }
}

// The brands of Reader and Tx exist only in types: these handles are what PostgreSQL's are.
const asTx = (tx: PgTx): Tx => tx as unknown as Tx;
export const readerOf = (pool: pg.Pool): Reader => new PgReader(new PgDb(pool), pool) as unknown as Reader;

/** The connection behind a Reader or Tx that this implementation handed out. */
export const connectionOf = (handle: Reader): PgDb => (handle as unknown as Handle).db;

/** The transaction behind a Tx, for repositories that keep per-transaction state (the events' lock). */
export const pgTxOf = (tx: Tx): PgTx => tx as unknown as PgTx;

/** Whether a handle is a transaction (and may lock what it reads) rather than `Store.reader`. */
export const isTx = (handle: Reader): boolean => handle instanceof PgTx;

/**
 * Runs `work` with run-time settings (`SET LOCAL`, e.g. a query planner's or an index's knobs) in
 * force. In a Tx they are set on it and stay until it ends; for the reader, whose statements run
 * outside any transaction on any pooled connection, `work` gets a read-only transaction of its own
 * on one connection, where they hold for it alone. Names and values are bound as parameters.
 */
export async function withSettings<T>(r: Reader, settings: Record<string, string>, work: (db: PgDb) => Promise<T>): Promise<T> {
  const names = Object.keys(settings);
  const values = names.map((name) => settings[name] ?? "");
  const apply = (db: PgDb): Promise<unknown> => db.run("SELECT set_config(name, value, true) FROM unnest(?::text[], ?::text[]) AS s (name, value)", names, values);
  const handle = r as unknown as Handle;
  if (!(handle instanceof PgReader)) {
    const db = connectionOf(r);
    await apply(db);
    return work(db);
  }
  const client = await handle.pool.connect();
  let broken = false;
  try {
    const db = new PgDb(client);
    await client.query("BEGIN READ ONLY");
    try {
      await apply(db);
      const result = await work(db);
      await client.query("COMMIT");
      return result;
    } catch (error) {
      try {
        await client.query("ROLLBACK");
      } catch {
        broken = true;
      }
      throw error;
    }
  } finally {
    client.release(broken);
  }
}

// Another transaction got in the way: serialization failure, deadlock, or both inserting one key.
// Run again, the work sees what the other committed and takes the path that fits it.
const RETRYABLE = new Set(["40001", "40P01", "23505"]);
const ATTEMPTS = 5;

function retryable(error: unknown): boolean {
  const cause = error instanceof ConstraintViolation ? error.cause : error;
  return RETRYABLE.has(String((cause as { code?: unknown } | null)?.code));
}

/**
 * One transaction on a connection of its own. Unlike SQLite's, transactions here overlap, each on
 * its connection; the rules that span rows are kept by locks (`tx.lock`, `FOR UPDATE`), key
 * constraints and conditional updates, and a transaction that collides with another is run again.
 */
export async function runTransaction<T>(
  pool: pg.Pool,
  guards: readonly TransactionGuard[],
  work: (tx: Tx) => Promise<T>,
  onHookError: (error: unknown) => void,
  /** Where after-commit hooks run: the store's own context, never the caller's request context. */
  hookScope: AsyncResource,
  /** Told how long a transaction held the events' lock, once it released it. */
  onEventsLockReleased: (seconds: number) => void,
): Promise<T> {
  const client = await pool.connect();
  let broken = false;
  try {
    for (let attempt = 1; ; attempt++) {
      const tx = new PgTx(new PgDb(client));
      let result: T;
      try {
        await client.query("BEGIN");
        result = await work(asTx(tx));
        for (const guard of guards) await guard(asTx(tx), result);
        await client.query("COMMIT");
      } catch (error) {
        tx.finish();
        try {
          await client.query("ROLLBACK");
        } catch (rollbackError) {
          broken = true;
          throw rollbackError;
        } finally {
          if (tx.eventsLockedAt !== null) onEventsLockReleased((performance.now() - tx.eventsLockedAt) / 1000);
        }
        if (attempt < ATTEMPTS && retryable(error)) continue;
        throw error;
      }
      tx.finish();
      if (tx.eventsLockedAt !== null) onEventsLockReleased((performance.now() - tx.eventsLockedAt) / 1000);
      hookScope.runInAsyncScope(() => {
        for (const hook of tx.hooks) {
          try {
            hook();
          } catch (error) {
            onHookError(error);
          }
        }
      });
      return result;
    }
  } finally {
    client.release(broken);
  }
}
