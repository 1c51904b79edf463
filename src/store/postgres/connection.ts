import { createHash } from "node:crypto";
import pg from "pg";
import { ConstraintViolation } from "../store.js";

// int8 (bigint: keys, seqs, counts) as a JavaScript number, as SQLite gives it: every value Cairn
// stores in one stays far below 2^53.
pg.types.setTypeParser(pg.types.builtins.INT8, (value) => Number(value));

export type Row = Record<string, unknown>;
type Queryable = pg.Pool | pg.ClientBase;

const converted = new Map<string, { text: string; name: string }>();

/**
 * Cairn's SQL marks parameters with `?`, as SQLite does, so fragments (visibility, filters) compose
 * the same way for both; PostgreSQL wants `$1, $2, …`. A `?` inside a quoted literal is left alone.
 * Each statement is prepared once per connection, under a name derived from its text.
 */
function prepared(sql: string): { text: string; name: string } {
  let found = converted.get(sql);
  if (!found) {
    let index = 0;
    let quoted = false;
    let text = "";
    for (const char of sql) {
      if (char === "'") quoted = !quoted;
      text += char === "?" && !quoted ? `$${++index}` : char;
    }
    found = { text, name: `q${createHash("sha1").update(text).digest("hex").slice(0, 20)}` };
    converted.set(sql, found);
  }
  return found;
}

/** A pool or one of its connections, with the three calls Cairn's repositories make. */
export class PgDb {
  /**
   * On one connection (a transaction's), the statement last sent: the next is sent once it is
   * answered. Code that starts several reads at once on a transaction (`Promise.all`, a search's
   * word counts) gets them one after another, as PostgreSQL runs them, without leaning on pg's own
   * queue, which pg 9 removes (pg 8 warns of its use). A pool gives each statement its own connection.
   */
  private tail: Promise<unknown> | null;

  constructor(readonly queryable: Queryable) {
    this.tail = queryable instanceof pg.Pool ? null : Promise.resolve();
  }

  async all<T = Row>(sql: string, ...params: unknown[]): Promise<T[]> {
    return (await this.query(sql, params)).rows as T[];
  }

  async get<T = Row>(sql: string, ...params: unknown[]): Promise<T | undefined> {
    return (await this.all<T>(sql, ...params))[0];
  }

  /** Runs a statement; `changes` is the number of rows it touched, `rows` what it returned. */
  async run(sql: string, ...params: unknown[]): Promise<{ changes: number; rows: Row[] }> {
    const result = await this.query(sql, params);
    return { changes: result.rowCount ?? 0, rows: result.rows as Row[] };
  }

  /** Statements without parameters, several at once (migrations, DDL). */
  async exec(sql: string): Promise<void> {
    await this.inTurn(() => this.queryable.query(sql));
  }

  private inTurn<T>(send: () => Promise<T>): Promise<T> {
    if (this.tail === null) return send();
    const answer = this.tail.then(send);
    this.tail = answer.catch(() => undefined);
    return answer;
  }

  private query(sql: string, params: unknown[]): Promise<pg.QueryResult> {
    return this.inTurn(() => this.send(sql, params));
  }

  private async send(sql: string, params: unknown[]): Promise<pg.QueryResult> {
    const { text, name } = prepared(sql);
    try {
      return await this.queryable.query({ text, name, values: params });
    } catch (error) {
      // Class 23: integrity constraint violation.
      if ((error as { code?: unknown }).code !== undefined && String((error as { code: unknown }).code).startsWith("23")) {
        throw new ConstraintViolation((error as Error).message, { cause: error });
      }
      throw error;
    }
  }
}
