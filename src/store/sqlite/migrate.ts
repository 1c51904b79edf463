import { readdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { InternalError } from "../../core/errors.js";
import { migrationsDir } from "../../core/paths.js";
import type { Db } from "./connection.js";

export interface Migration {
  version: number;
  name: string;
  sql: string;
}

export function loadMigrations(dir = migrationsDir): Migration[] {
  return readdirSync(dir)
    .filter((file) => /^\d{3}_[a-z0-9_]+\.sql$/.test(file))
    .sort()
    .map((file) => ({ version: Number(file.slice(0, 3)), name: file, sql: readFileSync(join(dir, file), "utf8") }));
}

/** Thrown when the database was written by a newer Cairn than this one. */
export class SchemaTooNewError extends InternalError {
  constructor(found: number, known: number) {
    super("setup", `database schema version ${found} is newer than this version of cairn understands (${known}); upgrade cairn`);
    this.name = "SchemaTooNewError";
  }
}

export function schemaVersion(db: Db): number {
  const row = db.get<{ version: number | null }>("SELECT max(version) AS version FROM schema_migrations");
  return row?.version ?? 0;
}

/** Applies each pending numbered migration in its own transaction, in order. */
export function runMigrations(db: Db, migrations = loadMigrations()): number {
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
