import { AsyncResource } from "node:async_hooks";
import Database from "better-sqlite3";
import * as sqliteVec from "sqlite-vec";
import { chmodSync, existsSync } from "node:fs";
import { InternalError } from "../core/errors.js";
import { runMigrations } from "./migrate.js";

export type Row = Record<string, unknown>;

interface QueuedWrite {
  run: () => unknown;
  resolve: (value: unknown) => void;
  reject: (error: unknown) => void;
}
export type Statement = Database.Statement<unknown[], Row>;

/**
 * One SQLite connection (better-sqlite3 is synchronous, so a second one would only add locking),
 * with cached statements and write transactions that run hooks after they commit.
 */
export class Db {
  readonly sqlite: Database.Database;
  private readonly statements = new Map<string, Statement>();
  private pendingHooks: (() => void)[] | null = null;
  private queued: QueuedWrite[] = [];

  constructor(sqlite: Database.Database) {
    this.sqlite = sqlite;
  }

  prepare(sql: string): Statement {
    let statement = this.statements.get(sql);
    if (!statement) {
      statement = this.sqlite.prepare<unknown[], Row>(sql);
      this.statements.set(sql, statement);
    }
    return statement;
  }

  get<T = Row>(sql: string, ...params: unknown[]): T | undefined {
    return this.prepare(sql).get(...params) as T | undefined;
  }

  all<T = Row>(sql: string, ...params: unknown[]): T[] {
    return this.prepare(sql).all(...params) as T[];
  }

  run(sql: string, ...params: unknown[]): Database.RunResult {
    return this.prepare(sql).run(...params);
  }

  get inTransaction(): boolean {
    return this.sqlite.inTransaction;
  }

  /**
   * Runs `fn` in a `BEGIN IMMEDIATE` transaction (nested calls join the outer one). Hooks
   * registered with `afterCommit` run once the outermost transaction has committed, and are
   * dropped if it rolls back: that is how events reach subscribers only for changes that happened.
   */
  write<T>(fn: () => T): T {
    if (this.pendingHooks) return fn();
    const hooks: (() => void)[] = [];
    this.pendingHooks = hooks;
    let result: T;
    try {
      result = this.sqlite.transaction(fn).immediate();
    } finally {
      this.pendingHooks = null;
    }
    for (const hook of hooks) hook();
    return result;
  }

  /**
   * Group commit: writes queued in the same turn of the event loop share one transaction, so one
   * fsync (synchronous=FULL) serves them all. Each runs in its own savepoint, so one that throws
   * rolls back alone; every promise settles only after the commit, so nothing is acknowledged
   * before it is durable.
   */
  writeSoon<T>(fn: () => T): Promise<T> {
    return new Promise<T>((resolve, reject) => {
      // Bound to the caller's async context, so whatever the caller's context carries (a fencing
      // token) is in force while its write runs inside the shared transaction.
      this.queued.push({ run: AsyncResource.bind(fn), resolve: resolve as (value: unknown) => void, reject });
      if (this.queued.length === 1) setImmediate(() => this.flushQueued());
    });
  }

  private flushQueued(): void {
    const jobs = this.queued.splice(0);
    if (jobs.length === 0) return;
    const hooks: (() => void)[] = [];
    const settle: (() => void)[] = [];
    try {
      this.sqlite
        .transaction(() => {
          for (const job of jobs) {
            const jobHooks: (() => void)[] = [];
            this.pendingHooks = jobHooks;
            this.run("SAVEPOINT queued_write");
            try {
              const value = job.run();
              this.run("RELEASE queued_write");
              hooks.push(...jobHooks);
              settle.push(() => job.resolve(value));
            } catch (error) {
              this.run("ROLLBACK TO queued_write");
              this.run("RELEASE queued_write");
              settle.push(() => job.reject(error));
            }
          }
        })
        .immediate();
    } catch (error) {
      // The commit itself failed: none of the writes happened.
      for (const job of jobs) job.reject(error);
      return;
    } finally {
      this.pendingHooks = null;
    }
    for (const hook of hooks) hook();
    for (const done of settle) done();
  }

  afterCommit(hook: () => void): void {
    if (!this.pendingHooks) throw new InternalError("invariant", "afterCommit outside a write transaction");
    this.pendingHooks.push(hook);
  }

  ping(): boolean {
    try {
      return this.sqlite.open && this.get("SELECT 1 AS ok") !== undefined;
    } catch {
      return false;
    }
  }

  close(): void {
    if (!this.sqlite.open) return;
    this.flushQueued();
    try {
      this.sqlite.pragma("wal_checkpoint(TRUNCATE)");
    } finally {
      this.sqlite.close();
    }
  }
}

export interface OpenOptions {
  readonly?: boolean;
  /** Skip migrations (for read-only tools such as backup). */
  migrate?: boolean;
}

export function openDatabase(file: string, options: OpenOptions = {}): Db {
  const isNew = !existsSync(file);
  const sqlite = new Database(file, { readonly: options.readonly ?? false, fileMustExist: options.readonly ?? false });
  if (isNew && !options.readonly) chmodSync(file, 0o600);
  sqliteVec.load(sqlite);
  sqlite.pragma("busy_timeout = 5000");
  if (!options.readonly) sqlite.pragma("journal_mode = WAL");
  // FULL: an acknowledged write survives power loss, not only a process crash.
  sqlite.pragma("synchronous = FULL");
  sqlite.pragma("foreign_keys = ON");
  sqlite.pragma("temp_store = MEMORY");
  sqlite.pragma("cache_size = -32768");
  // Every KNN scan reads every stored vector; reading them through a memory map instead of copying
  // pages into the cache makes a scan about a third cheaper. Writes keep the normal, fsynced path.
  sqlite.pragma("mmap_size = 1073741824");
  const db = new Db(sqlite);
  if (options.migrate ?? !options.readonly) runMigrations(db);
  return db;
}
