import { loadMigrations, SchemaTooNewError } from "../migrations.js";
import type { Db } from "./connection.js";

export function schemaVersion(db: Db): number {
  const row = db.get<{ version: number | null }>("SELECT max(version) AS version FROM schema_migrations");
  return row?.version ?? 0;
}

/** Applies each pending numbered migration in its own transaction, in order. */
export function runMigrations(db: Db, migrations = loadMigrations("sqlite")): number {
  db.exec(
    "CREATE TABLE IF NOT EXISTS schema_migrations (version INTEGER PRIMARY KEY, name TEXT NOT NULL, applied_at TEXT NOT NULL) STRICT",
  );
  const current = schemaVersion(db);
  const latest = migrations.at(-1)?.version ?? 0;
  if (current > latest) throw new SchemaTooNewError(current, latest);
  for (const migration of migrations) {
    if (migration.version <= current) continue;
    db.sqlite
      .transaction(() => {
        db.exec(migration.sql);
        db.run(
          "INSERT INTO schema_migrations (version, name, applied_at) VALUES (?, ?, ?)",
          migration.version,
          migration.name,
          new Date().toISOString(),
        );
      })
      .immediate();
  }
  return latest;
}
