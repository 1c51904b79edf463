import { readdirSync, readlinkSync, realpathSync, rmSync } from "node:fs";
import { dirname, join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { connect } from "../../src/store/sqlite/connection.js";
import { loadMigrations, SchemaTooNewError } from "../../src/store/migrations.js";
import { runMigrations } from "../../src/store/sqlite/migrate.js";
import { SqliteStore } from "../../src/store/sqlite/store.js";
import { connectionOf } from "../../src/store/sqlite/transactions.js";
import { tempDir } from "../helpers/server.js";

describe("the SQLite store", () => {
  const dirs: string[] = [];
  const fresh = (): string => {
    const dir = tempDir();
    dirs.push(dir);
    return join(dir, "cairn.db");
  };
  /** A connection to `file` with every migration applied, as the store opens it. */
  const migrated = (file: string) => {
    const db = connect(file);
    runMigrations(db);
    return db;
  };
  afterEach(() => {
    for (const dir of dirs.splice(0)) rmSync(dir, { recursive: true, force: true });
  });

  it("opens connections with WAL, synchronous=FULL, foreign keys and a busy timeout", () => {
    const db = connect(fresh());
    expect(db.sqlite.pragma("journal_mode", { simple: true })).toBe("wal");
    expect(db.sqlite.pragma("synchronous", { simple: true })).toBe(2); // FULL
    expect(db.sqlite.pragma("foreign_keys", { simple: true })).toBe(1);
    expect(db.sqlite.pragma("busy_timeout", { simple: true })).toBeGreaterThanOrEqual(1000);
    db.close();
  });

  it("applies every migration once and records it", () => {
    const file = fresh();
    migrated(file).close();
    const db = migrated(file);
    const applied = db.all<{ version: number }>("SELECT version FROM schema_migrations ORDER BY version");
    expect(applied.map((row) => row.version)).toEqual(loadMigrations("sqlite").map((migration) => migration.version));
    db.close();
  });

  it("refuses a database written by a newer version", () => {
    const file = fresh();
    const db = migrated(file);
    db.run("INSERT INTO schema_migrations (version, name, applied_at) VALUES (999, '999_future.sql', '2030-01-01T00:00:00.000Z')");
    db.close();
    expect(() => SqliteStore.open(file)).toThrow(SchemaTooNewError);
  });

  it("runs after-commit hooks only when the transaction commits", async () => {
    const store = SqliteStore.open(fresh());
    const heard: string[] = [];
    await store.transaction((tx) => {
      tx.afterCommit(() => heard.push("committed"));
      return Promise.resolve();
    });
    await expect(
      store.transaction((tx) => {
        tx.afterCommit(() => heard.push("rolled back"));
        throw new Error("abort");
      }),
    ).rejects.toThrow("abort");
    expect(heard).toEqual(["committed"]);
    await store.close();
  });

  it("keeps the hooks of a savepoint that succeeds, in order, and drops those of one that fails, however many there are", async () => {
    const store = SqliteStore.open(fresh());
    const heard: number[] = [];
    await store.transaction(async (tx) => {
      for (let line = 0; line < 20_000; line++) {
        await tx
          .savepoint((inner) => {
            inner.afterCommit(() => heard.push(line));
            if (line % 1000 === 999) throw new Error("this line fails");
            return Promise.resolve();
          })
          .catch(() => undefined);
      }
    });
    expect(heard).toHaveLength(20_000 - 20);
    expect(heard.slice(0, 3)).toEqual([0, 1, 2]);
    expect(heard).not.toContain(999);
    expect(heard.every((line, index) => index === 0 || line > (heard[index - 1] as number))).toBe(true);
    await store.close();
  });

  it("commits writes queued together in one transaction, rolling back only the one that fails", async () => {
    const file = fresh();
    const store = SqliteStore.open(file);
    const other = connect(file);
    other.exec("CREATE TABLE notes (text TEXT NOT NULL)");
    const heard: string[] = [];
    const add = (text: string, fail = false) =>
      store.transaction((tx) => {
        connectionOf(tx).run("INSERT INTO notes (text) VALUES (?)", text);
        tx.afterCommit(() => heard.push(text));
        if (fail) throw new Error(`${text} failed`);
        return Promise.resolve(text);
      });
    const results = await Promise.allSettled([add("first"), add("second", true), add("third")]);
    expect(results.map((result) => result.status)).toEqual(["fulfilled", "rejected", "fulfilled"]);
    expect(heard).toEqual(["first", "third"]);
    // Settled means committed: another connection sees exactly the two that succeeded.
    expect(other.all<{ text: string }>("SELECT text FROM notes ORDER BY rowid").map((row) => row.text)).toEqual(["first", "third"]);
    other.close();
    await store.close();
  });

  it("syncs the writer's WAL itself: NORMAL on the connection, the WAL held open from the first commit until close", async () => {
    const file = fresh();
    const store = SqliteStore.open(file);
    const wal = realpathSync(dirname(file)) + "/cairn.db-wal";
    const openFiles = () => readdirSync("/proc/self/fd").flatMap((fd) => {
      try {
        return [readlinkSync(`/proc/self/fd/${fd}`)];
      } catch {
        return []; // the directory's own descriptor, gone by now
      }
    });
    expect(connectionOf(store.reader).sqlite.pragma("synchronous", { simple: true })).toBe(1); // NORMAL
    await store.transaction((tx) => {
      connectionOf(tx).run("INSERT INTO meta (key, value) VALUES ('synced', 'yes')");
      return Promise.resolve();
    });
    // SQLite's two connections have it open, and so does the sync, with a descriptor of its own.
    expect(openFiles().filter((path) => path === wal).length).toBeGreaterThanOrEqual(3);
    await store.close();
    expect(openFiles()).not.toContain(wal);
  });

  it("keeps the keyword index in step with memory rows in the same transaction", () => {
    const db = migrated(fresh());
    db.run(
      `INSERT INTO memory (id, type, agent_id, project, scope, content, content_key, confidence, created_at, updated_at)
       VALUES ('00000000-0000-4000-8000-000000000001', 'memory', 'a', NULL, 'project', 'zebra crossing', 'k', 1, 't', 't')`,
    );
    const match = () => db.all("SELECT rowid FROM memory_fts WHERE memory_fts MATCH 'zebra'").length;
    expect(match()).toBe(1);
    db.run("UPDATE memory SET content = 'pelican crossing' WHERE id = '00000000-0000-4000-8000-000000000001'");
    expect(match()).toBe(0);
    db.close();
  });
});
