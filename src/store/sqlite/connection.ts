import { createHash } from "node:crypto";
import Database from "better-sqlite3";
import * as sqliteVec from "sqlite-vec";
import { chmodSync, existsSync } from "node:fs";
import { ConstraintViolation } from "../store.js";
import { explainedNativeError } from "./native.js";

export type Row = Record<string, unknown>;
export type Statement = Database.Statement<unknown[], Row>;

/** One better-sqlite3 connection with its prepared statements cached by their text. */
export class Db {
  readonly sqlite: Database.Database;
  private readonly statements = new Map<string, Statement>();

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
    try {
      return this.prepare(sql).run(...params);
    } catch (error) {
      if (error instanceof Database.SqliteError && error.code.startsWith("SQLITE_CONSTRAINT")) {
        throw new ConstraintViolation(error.message, { cause: error });
      }
      throw error;
    }
  }

  exec(sql: string): void {
    this.sqlite.exec(sql);
  }

  get open(): boolean {
    return this.sqlite.open;
  }

  close(): void {
    if (this.sqlite.open) this.sqlite.close();
  }
}

export interface ConnectionOptions {
  readonly?: boolean;
  /** Refuse writes on this connection (the store's reader). */
  queryOnly?: boolean;
}

/**
 * SQLite has no SHA-256 in SQL: every connection gets this function, so the shared SQL can hash
 * (the merkle leaves, src/store/sql/merkle.ts) as PostgreSQL's `sha256()` does. Nothing in the
 * schema calls it, so the file stays readable by any SQLite.
 */
export const SHA256_FUNCTION = "cairn_sha256";

// SQLite hands the function a string, a number, a buffer or null; the leaves pass it text.
const sha256Hex = (text: unknown): string | null =>
  typeof text === "string" || typeof text === "number" ? createHash("sha256").update(String(text), "utf8").digest("hex") : null;

/** Opens a connection with the pragmas every Cairn connection runs with. */
export function connect(file: string, options: ConnectionOptions = {}): Db {
  const readonly = options.readonly ?? false;
  const isNew = !existsSync(file);
  let sqlite: Database.Database;
  try {
    sqlite = new Database(file, { readonly, fileMustExist: readonly });
  } catch (error) {
    throw explainedNativeError(error);
  }
  if (isNew && !readonly) chmodSync(file, 0o600);
  sqliteVec.load(sqlite);
  sqlite.pragma("busy_timeout = 5000");
  if (!readonly) sqlite.pragma("journal_mode = WAL");
  // FULL: an acknowledged write survives power loss, not only a process crash.
  sqlite.pragma("synchronous = FULL");
  sqlite.pragma("foreign_keys = ON");
  sqlite.pragma("temp_store = MEMORY");
  sqlite.pragma("cache_size = -32768");
  // A memory map makes reading a vector a third cheaper than copying its page into the cache, but
  // in WAL mode SQLite unmaps the whole file whenever a read transaction finds another
  // connection's commit: the store's reader, which finds one after nearly every write, would pay
  // for a new mapping and a page fault per page it touches (docs/decisions.md, "The reader
  // without a memory map"). The writer sees only its own commits and keeps its map.
  if (!options.queryOnly) sqlite.pragma("mmap_size = 1073741824");
  if (options.queryOnly) sqlite.pragma("query_only = ON");
  sqlite.function(SHA256_FUNCTION, { deterministic: true }, sha256Hex);
  return new Db(sqlite);
}
