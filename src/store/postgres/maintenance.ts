import type pg from "pg";
import { InternalError } from "../../core/errors.js";
import type { Maintenance } from "../maintenance.js";
import { loadMigrations } from "../migrations.js";
import { PgDb } from "./connection.js";

const KEYWORD_INDEX = "memory_search";

/** Checks of the database as a whole, for `cairn doctor`, on the pool (what is committed). */
export class PgMaintenance implements Maintenance {
  private readonly db: PgDb;

  constructor(pool: pg.Pool, _url: string) {
    this.db = new PgDb(pool);
  }

  // PostgreSQL has no integrity pragma: its pages are checksummed (when the cluster is) and checked
  // as they are read, and amcheck is an extension an administrator runs. A database that answers
  // is as far as Cairn can check.
  async integrityCheck(): Promise<string> {
    await this.db.get("SELECT 1");
    return "ok";
  }

  async storageSizes(): Promise<{ name: string; bytes: number }[]> {
    const row = await this.db.get<{ name: string; bytes: number }>("SELECT current_database() AS name, pg_database_size(current_database()) AS bytes");
    return row ? [{ name: row.name, bytes: Number(row.bytes) }] : [];
  }

  // Foreign keys are always enforced here (SQLite enforces them only where a connection asks):
  // no row can break one.
  async foreignKeyViolations(): Promise<number> {
    await this.db.get("SELECT 1");
    return 0;
  }

  // The keyword index is a generated column PostgreSQL keeps in step with the content; what can go
  // wrong is its GIN index: dropped, or left invalid by a failed CREATE INDEX CONCURRENTLY / REINDEX.
  async keywordIndexProblem(): Promise<string | null> {
    const index = await this.db.get<{ valid: boolean }>(
      "SELECT i.indisvalid AS valid FROM pg_index i WHERE i.indexrelid = to_regclass(?)",
      KEYWORD_INDEX,
    );
    if (!index) return `the keyword index ${KEYWORD_INDEX} is missing`;
    if (!index.valid) return `the keyword index ${KEYWORD_INDEX} is invalid (rebuild it: REINDEX INDEX ${KEYWORD_INDEX})`;
    return null;
  }

  async schema(): Promise<{ version: number; latest: number }> {
    const exists = await this.db.get<{ found: boolean }>("SELECT to_regclass('schema_migrations') IS NOT NULL AS found");
    const row = exists?.found ? await this.db.get<{ version: number | null }>("SELECT max(version) AS version FROM schema_migrations") : undefined;
    return { version: Number(row?.version ?? 0), latest: loadMigrations("postgres").at(-1)?.version ?? 0 };
  }

  backupTo(): Promise<number> {
    return Promise.reject(new InternalError("setup", "cairn backup copies SQLite files; back PostgreSQL up with pg_dump"));
  }
}
