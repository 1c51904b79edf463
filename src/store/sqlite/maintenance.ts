import { chmodSync, statSync, writeFileSync } from "node:fs";
import { basename } from "node:path";
import type { Maintenance } from "../maintenance.js";
import type { Tx } from "../store.js";
import type { Db } from "./connection.js";
import { loadMigrations } from "../migrations.js";
import { schemaVersion } from "./migrate.js";
import { connectionOf } from "./transactions.js";

/**
 * Runs on the reader connection, which sees only what is committed: a check or a backup must
 * never see (or copy) a transaction that is still open on the writer.
 */
export class SqliteMaintenance implements Maintenance {
  constructor(
    private readonly reader: Db,
    private readonly transact: <T>(work: (tx: Tx) => Promise<T>) => Promise<T>,
  ) {}

  async integrityCheck(): Promise<string> {
    return String(this.reader.sqlite.pragma("integrity_check", { simple: true }));
  }

  async storageSizes(): Promise<{ name: string; bytes: number }[]> {
    const file = this.reader.sqlite.name;
    return [file, `${file}-wal`].flatMap((path) => {
      const stat = statSync(path, { throwIfNoEntry: false });
      return stat ? [{ name: basename(path), bytes: stat.size }] : [];
    });
  }

  async foreignKeyViolations(): Promise<number> {
    return (this.reader.sqlite.pragma("foreign_key_check") as unknown[]).length;
  }

  // FTS5's 'integrity-check' command throws when the index does not match its content table. It is
  // written as an INSERT, so it runs as a transaction of its own (it changes nothing).
  async keywordIndexProblem(): Promise<string | null> {
    try {
      await this.transact(async (tx) => connectionOf(tx).exec("INSERT INTO memory_fts (memory_fts) VALUES ('integrity-check')"));
      return null;
    } catch (error) {
      return error instanceof Error ? error.message : String(error);
    }
  }

  async schema(): Promise<{ version: number; latest: number }> {
    return { version: schemaVersion(this.reader), latest: loadMigrations("sqlite").at(-1)?.version ?? 0 };
  }

  // SQLite's backup API: a consistent copy while the server writes. The copy holds what the
  // database holds (private entries, key hashes), so it is created as private as the database
  // itself (0600) before SQLite writes into it, never world-readable.
  async backupTo(file: string): Promise<number> {
    writeFileSync(file, "", { mode: 0o600 });
    chmodSync(file, 0o600);
    return (await this.reader.sqlite.backup(file)).totalPages;
  }
}
