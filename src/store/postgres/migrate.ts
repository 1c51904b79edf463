import type pg from "pg";
import { loadMigrations, SchemaTooNewError } from "../migrations.js";

// Held while migrating: servers starting together wait for the first to finish, then find nothing to do.
const MIGRATION_LOCK = 7_418_245_001;

/** The schema version the database is at (0 when it has none). */
async function schemaVersion(client: pg.ClientBase): Promise<number> {
  const exists = await client.query<{ found: boolean }>("SELECT to_regclass('schema_migrations') IS NOT NULL AS found");
  if (!exists.rows[0]?.found) return 0;
  const result = await client.query<{ version: number | null }>("SELECT max(version) AS version FROM schema_migrations");
  return Number(result.rows[0]?.version ?? 0);
}

/** Applies each pending numbered migration in its own transaction, in order, one server at a time. */
export async function runMigrations(pool: pg.Pool, migrations = loadMigrations("postgres")): Promise<number> {
  const client = await pool.connect();
  try {
    await client.query("SELECT pg_advisory_lock($1)", [MIGRATION_LOCK]);
    try {
      await client.query("CREATE TABLE IF NOT EXISTS schema_migrations (version INTEGER PRIMARY KEY, name TEXT NOT NULL, applied_at TEXT NOT NULL)");
      const current = await schemaVersion(client);
      const latest = migrations.at(-1)?.version ?? 0;
      if (current > latest) throw new SchemaTooNewError(current, latest);
      for (const migration of migrations) {
        if (migration.version <= current) continue;
        await client.query("BEGIN");
        try {
          await client.query(migration.sql);
          await client.query("INSERT INTO schema_migrations (version, name, applied_at) VALUES ($1, $2, $3)", [
            migration.version,
            migration.name,
            new Date().toISOString(),
          ]);
          await client.query("COMMIT");
        } catch (error) {
          await client.query("ROLLBACK");
          throw error;
        }
      }
      return latest;
    } finally {
      await client.query("SELECT pg_advisory_unlock($1)", [MIGRATION_LOCK]);
    }
  } finally {
    client.release();
  }
}
