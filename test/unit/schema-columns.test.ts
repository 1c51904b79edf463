import { FEED_ROW_COLUMNS } from "../../src/store/feeds.js";
import { MESH_DISCOVERED_ROW_COLUMNS, MESH_LINK_ROW_COLUMNS, MESH_SUPPRESSION_ROW_COLUMNS, MESH_TOKEN_ROW_COLUMNS } from "../../src/store/mesh.js";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { AGENT_ROW_COLUMNS } from "../../src/store/agents.js";
import { LEASE_ROW_COLUMNS, STATE_ROW_COLUMNS } from "../../src/store/archivist.js";
import { RUN_NODE_ROW_COLUMNS, RUN_ROW_COLUMNS } from "../../src/store/blueprint-runs.js";
import { BLUEPRINT_ROW_COLUMNS } from "../../src/store/blueprints.js";
import { CAPTURE_ROW_COLUMNS } from "../../src/store/captures.js";
import { ANCHOR_ROW_COLUMNS } from "../../src/store/compile.js";
import { DECISION_ROW_COLUMNS } from "../../src/store/decisions.js";
import { EVENT_ROW_COLUMNS } from "../../src/store/events.js";
import { EDGE_ROW_COLUMNS } from "../../src/store/graph.js";
import { HANDOFF_ROW_COLUMNS } from "../../src/store/handoffs.js";
import { IDEMPOTENCY_ROW_COLUMNS } from "../../src/store/idempotency.js";
import { LOG_ROW_COLUMNS } from "../../src/store/logs.js";
import { MEMORY_ROW_COLUMNS } from "../../src/store/memory.js";
import { MESSAGE_ROW_COLUMNS } from "../../src/store/messages.js";
import { loadMigrations } from "../../src/store/migrations.js";
import { CLIENT_ROW_COLUMNS, CODE_ROW_COLUMNS, GRANT_ROW_COLUMNS, REFRESH_ROW_COLUMNS, TOKEN_ROW_COLUMNS } from "../../src/store/oauth.js";
import { MEMBER_ROW_COLUMNS, PROJECT_ROW_COLUMNS } from "../../src/store/projects.js";
import { connect } from "../../src/store/sqlite/connection.js";
import { runMigrations } from "../../src/store/sqlite/migrate.js";
import { COMMENT_ROW_COLUMNS, NEW_OUTCOME_ROW_COLUMNS, TASK_ROW_COLUMNS } from "../../src/store/tasks.js";
import { UI_SESSION_ROW_COLUMNS } from "../../src/store/ui-sessions.js";
import { onPostgres, withDatabase } from "../helpers/database.js";

const ROWS: readonly { table: string; columns: readonly string[]; omitted: readonly string[] }[] = [
  AGENT_ROW_COLUMNS,
  LEASE_ROW_COLUMNS,
  STATE_ROW_COLUMNS,
  RUN_ROW_COLUMNS,
  RUN_NODE_ROW_COLUMNS,
  BLUEPRINT_ROW_COLUMNS,
  CAPTURE_ROW_COLUMNS,
  ANCHOR_ROW_COLUMNS,
  DECISION_ROW_COLUMNS,
  EVENT_ROW_COLUMNS,
  EDGE_ROW_COLUMNS,
  HANDOFF_ROW_COLUMNS,
  IDEMPOTENCY_ROW_COLUMNS,
  LOG_ROW_COLUMNS,
  MEMORY_ROW_COLUMNS,
  MESSAGE_ROW_COLUMNS,
  TOKEN_ROW_COLUMNS,
  CLIENT_ROW_COLUMNS,
  GRANT_ROW_COLUMNS,
  CODE_ROW_COLUMNS,
  REFRESH_ROW_COLUMNS,
  PROJECT_ROW_COLUMNS,
  MEMBER_ROW_COLUMNS,
  TASK_ROW_COLUMNS,
  COMMENT_ROW_COLUMNS,
  NEW_OUTCOME_ROW_COLUMNS,
  UI_SESSION_ROW_COLUMNS,
  FEED_ROW_COLUMNS,
  MESH_TOKEN_ROW_COLUMNS,
  MESH_LINK_ROW_COLUMNS,
  MESH_DISCOVERED_ROW_COLUMNS,
  MESH_SUPPRESSION_ROW_COLUMNS,
];

/** Tables no Row is read from whole, and what reads them instead. */
const TABLES_WITHOUT_A_ROW: Record<string, string> = {
  meta: "settings, read one key at a time",
  memory_tags: "the index of memory.tags",
  memory_readers: "the counts behind memory.read_count and distinct_readers",
  task_tags: "the index of tasks.tags",
  task_dependencies: "TaskRow.depends_on and blocked",
  message_recipients: "MessageRow.read_at and is_recipient",
  event_audience: "an event's audience",
  ui_login_links: "UiSessionStore's login link methods",
  jobs: "JobStore.claim",
  decision_tags: "the index of decisions.tags",
  feed_items: "FeedStore.seenKeys and recordItem",
  rate_buckets: "SharedRateLimits",
  auth_failures: "SharedFailureLog",
  quota_buckets: "QuotaStore.charge, one upsert that answers the charge",
  vector_changes: "the HNSW index's catch-up (src/store/sqlite/ann.ts), a seq and a pk at a time",
};

// Several PostgreSQL servers share one rate limit and one count of failed sign-ins; a SQLite
// server is one process and keeps both in memory.
const POSTGRES_ONLY_TABLES = ["rate_buckets", "auth_failures"];

// SQLite's HNSW index lives in a server's memory and follows the database through this log;
// pgvector's index is kept by PostgreSQL itself.
const SQLITE_ONLY_TABLES = ["vector_changes"];

// PostgreSQL's keyword index is a generated tsvector column; SQLite's is an FTS5 table beside
// (memory_fts, decisions_fts), virtual, so neither side lists it among the tables.
const POSTGRES_ONLY_COLUMNS: Record<string, readonly string[]> = { memory: ["search"], decisions: ["search"] };

// Made by the migration runner and the vector index, not by the migrations.
const NOT_FROM_MIGRATIONS = ["schema_migrations", "memory_embeddings"];

/** Table → its columns in order. */
type Schema = Map<string, string[]>;

/** The migrations' statements, comments dropped and whitespace collapsed (a trigger's body splits too: none of its pieces alters a table). */
function statementsOf(sql: string): string[] {
  const statements: string[] = [];
  let statement = "";
  for (const [token] of sql.matchAll(/'(?:[^']|'')*'|"[^"]*"|--[^\n]*|;|[^'";-]+|-|['"]/g)) {
    if (token === "'" || token === '"') throw new Error(`unterminated quote in: ${statement}`);
    if (token.startsWith("--")) continue;
    if (token === ";") {
      statements.push(statement);
      statement = "";
    } else statement += token;
  }
  statements.push(statement);
  return statements.map((text) => text.replace(/\s+/g, " ").trim()).filter((text) => text !== "");
}

/** `text` split at the commas outside parentheses and quotes. */
function splitAtCommas(text: string): string[] {
  const parts: string[] = [];
  let depth = 0;
  let quote: string | null = null;
  let start = 0;
  for (let at = 0; at < text.length; at++) {
    const char = text[at];
    if (quote !== null) {
      if (char === quote) quote = null;
    } else if (char === "'" || char === '"') quote = char;
    else if (char === "(") depth++;
    else if (char === ")") depth--;
    else if (char === "," && depth === 0) {
      parts.push(text.slice(start, at).trim());
      start = at + 1;
    }
  }
  parts.push(text.slice(start).trim());
  return parts;
}

const NAME = String.raw`("[^"]+"|[A-Za-z_][\w$]*)`;
const unquote = (name: string): string => (name.startsWith('"') ? name.slice(1, -1) : name.toLowerCase());
const CREATE_TABLE = new RegExp(String.raw`^CREATE TABLE (IF NOT EXISTS )?${NAME} ?\((.*)\)[^)]*$`, "i");
const ALTER_TABLE = new RegExp(String.raw`^ALTER TABLE (?:ONLY )?${NAME} (.*)$`, "i");
const DROP_TABLE = new RegExp(String.raw`^DROP TABLE (IF EXISTS )?${NAME}$`, "i");
const ADD_COLUMN = new RegExp(String.raw`^ADD COLUMN ${NAME}`, "i");
const DROP_COLUMN = new RegExp(String.raw`^DROP COLUMN ${NAME}$`, "i");
const RENAME_TABLE = new RegExp(String.raw`^RENAME TO ${NAME}$`, "i");
const RENAME_COLUMN = new RegExp(String.raw`^RENAME COLUMN ${NAME} TO ${NAME}$`, "i");
const COLUMN_NAME = new RegExp(`^${NAME}`);
const TABLE_CONSTRAINT = /^(PRIMARY|UNIQUE|CHECK|FOREIGN|CONSTRAINT|EXCLUDE)\b/i;

/** The name each column definition in a CREATE TABLE's parentheses starts with. */
function columnNames(definitions: string, statement: string): string[] {
  return splitAtCommas(definitions)
    .filter((item) => !TABLE_CONSTRAINT.test(item))
    .map((item) => {
      const name = COLUMN_NAME.exec(item)?.[1];
      if (name === undefined) throw new Error(`a column this test cannot read, ${item}, in: ${statement}`);
      return unquote(name);
    });
}

function columnsOfTable(schema: Schema, table: string, statement: string): string[] {
  const columns = schema.get(table);
  if (columns === undefined) throw new Error(`no table ${table} for: ${statement}`);
  return columns;
}

/** One ALTER TABLE action's change to `columns` (a table rename is the caller's). */
function alterColumns(columns: string[], action: string, statement: string): void {
  const add = ADD_COLUMN.exec(action);
  const drop = DROP_COLUMN.exec(action);
  const rename = RENAME_COLUMN.exec(action);
  const existing = drop ?? rename;
  if (add) {
    const column = unquote(add[1] as string);
    if (columns.includes(column)) throw new Error(`column ${column} added twice: ${statement}`);
    columns.push(column);
  } else if (existing) {
    const at = columns.indexOf(unquote(existing[1] as string));
    if (at === -1) throw new Error(`no such column: ${statement}`);
    if (rename) columns[at] = unquote(rename[2] as string);
    else columns.splice(at, 1);
  } else if (!/^(ADD|DROP) CONSTRAINT /i.test(action) && !/^ALTER COLUMN /i.test(action) && !/^(SET|RESET) \(/i.test(action)) {
    // Constraints, a column's type or default, and storage parameters (`SET (fillfactor = 80)`)
    // leave the columns as they are; any other action is one this reader does not know.
    throw new Error(`an ALTER TABLE this test cannot read: ${statement}`);
  }
}

/**
 * The tables and columns a migration set leaves, read from its SQL: enough for the statements the
 * migrations use, and loud about any table statement it does not know rather than wrong.
 */
function parseMigrations(dialect: "sqlite" | "postgres"): Schema {
  const schema: Schema = new Map();
  for (const migration of loadMigrations(dialect)) {
    for (const statement of statementsOf(migration.sql)) {
      const create = CREATE_TABLE.exec(statement);
      const alter = ALTER_TABLE.exec(statement);
      const drop = DROP_TABLE.exec(statement);
      if (create) {
        const table = unquote(create[2] as string);
        if (schema.has(table)) {
          if (create[1] === undefined) throw new Error(`table ${table} created twice: ${statement}`);
        } else schema.set(table, columnNames(create[3] as string, statement));
      } else if (alter) {
        const table = unquote(alter[1] as string);
        const columns = columnsOfTable(schema, table, statement);
        const renameTo = RENAME_TABLE.exec(alter[2] as string);
        if (renameTo) {
          schema.delete(table);
          schema.set(unquote(renameTo[1] as string), columns);
        } else for (const action of splitAtCommas(alter[2] as string)) alterColumns(columns, action, statement);
      } else if (drop) {
        const table = unquote(drop[2] as string);
        if (!schema.delete(table) && drop[1] === undefined) throw new Error(`no table ${table} to drop: ${statement}`);
      } else if (/^CREATE VIRTUAL TABLE /i.test(statement)) {
        // SQLite's FTS5 keyword indexes: not tables a Row or the other backend has.
      } else if (/^(CREATE|ALTER|DROP)\b[^(]*\bTABLE\b/i.test(statement)) {
        throw new Error(`a table statement this test cannot read: ${statement}`);
      }
    }
  }
  return schema;
}

/** The tables and columns SQLite reports after running every migration. */
function migratedSqlite(file: string): Schema {
  const db = connect(file);
  try {
    runMigrations(db);
    // Plain tables: the FTS5 keyword indexes are `virtual` and their storage `shadow`.
    const tables = db.all<{ name: string }>("SELECT name FROM pragma_table_list WHERE schema = 'main' AND type = 'table' ORDER BY name");
    const named = tables.map((table) => table.name).filter((name) => !name.startsWith("sqlite_") && !NOT_FROM_MIGRATIONS.includes(name));
    // table_xinfo, not table_info: a generated column is hidden from the latter.
    return new Map(named.map((name) => [name, db.all<{ name: string }>("SELECT name FROM pragma_table_xinfo(?)", name).map((column) => column.name)]));
  } finally {
    db.close();
  }
}

const sorted = (names: readonly string[]): string[] => [...names].sort();
/** Tables by name, each with its columns in order: a readable diff. */
const inOrder = (schema: Schema): Record<string, string[]> => Object.fromEntries([...schema].sort(([a], [b]) => a.localeCompare(b)));
/** Tables by name, each with its columns by name. */
const bySet = (schema: Schema): Record<string, string[]> => Object.fromEntries([...schema].sort(([a], [b]) => a.localeCompare(b)).map(([table, columns]) => [table, sorted(columns)]));

describe("the store's Rows and both backends' schemas", () => {
  const sqliteMigrations = parseMigrations("sqlite");
  const postgresMigrations = parseMigrations("postgres");
  let dir = "";
  let sqlite: Schema = new Map();
  beforeAll(() => {
    dir = mkdtempSync(join(tmpdir(), "cairn-schema-"));
    sqlite = migratedSqlite(join(dir, "cairn.db"));
  });
  afterAll(() => rmSync(dir, { recursive: true, force: true }));

  it("reads SQLite's migrations into the tables and columns, in order, that SQLite reports after running them", () => {
    expect(inOrder(sqliteMigrations)).toEqual(inOrder(sqlite));
  });

  it.runIf(onPostgres)("reads PostgreSQL's migrations into the tables and columns, in order, of a migrated database", async () => {
    // A clone of the suite's migrated template: a connection to the template itself would stop other tests cloning it.
    const live: Schema = new Map();
    await withDatabase(join(dir, "postgres"), async (db) => {
      const columns = await db.all<{ table_name: string; column_name: string }>(
        "SELECT table_name, column_name FROM information_schema.columns WHERE table_schema = current_schema() ORDER BY table_name, ordinal_position",
      );
      for (const { table_name: table, column_name: column } of columns) {
        if (!NOT_FROM_MIGRATIONS.includes(table)) live.set(table, [...(live.get(table) ?? []), column]);
      }
    });
    expect(inOrder(postgresMigrations)).toEqual(inOrder(live));
  });

  it.each(ROWS.map((row) => [row.table, row] as const))("ties the `%s` Row to its table's columns on SQLite and in PostgreSQL's migrations", (table, row) => {
    const expected = sorted([...row.columns, ...row.omitted]);
    expect(sqlite.has(table), `SQLite has a table ${table}`).toBe(true);
    expect(sorted(sqlite.get(table) ?? []), `SQLite's ${table} against its Row`).toEqual(expected);
    const postgresOnly = POSTGRES_ONLY_COLUMNS[table] ?? [];
    expect(postgresMigrations.has(table), `PostgreSQL has a table ${table}`).toBe(true);
    expect(sorted((postgresMigrations.get(table) ?? []).filter((column) => !postgresOnly.includes(column))), `PostgreSQL's ${table} against its Row`).toEqual(expected);
  });

  it("gives both backends the same tables with the same columns, but for PostgreSQL's shared counters and keyword columns and SQLite's vector change log", () => {
    const postgres = new Map(
      [...postgresMigrations]
        .filter(([table]) => !POSTGRES_ONLY_TABLES.includes(table))
        .map(([table, columns]) => [table, columns.filter((column) => !(POSTGRES_ONLY_COLUMNS[table] ?? []).includes(column))]),
    );
    const sqliteShared = new Map([...sqliteMigrations].filter(([table]) => !SQLITE_ONLY_TABLES.includes(table)));
    expect(bySet(postgres)).toEqual(bySet(sqliteShared));
    for (const table of SQLITE_ONLY_TABLES) expect(sqliteMigrations.has(table), `SQLite has ${table}`).toBe(true);
    for (const table of POSTGRES_ONLY_TABLES) expect(postgresMigrations.has(table), `PostgreSQL has ${table}`).toBe(true);
    for (const [table, columns] of Object.entries(POSTGRES_ONLY_COLUMNS)) expect(postgresMigrations.get(table), table).toEqual(expect.arrayContaining([...columns]));
  });

  it("ties every table to a Row, or names what reads it instead", () => {
    const tables = new Set([...sqliteMigrations.keys(), ...postgresMigrations.keys()]);
    const tied = new Set(ROWS.map((row) => row.table));
    expect(sorted([...new Set([...tied, ...Object.keys(TABLES_WITHOUT_A_ROW)])])).toEqual(sorted([...tables]));
    expect(Object.keys(TABLES_WITHOUT_A_ROW).filter((table) => tied.has(table)), "tables said to have no Row that have one").toEqual([]);
  });
});
