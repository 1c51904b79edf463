import { readdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { InternalError } from "../core/errors.js";
import { migrationsDir } from "../core/paths.js";

/** A numbered schema change; both implementations share the numbering, each has its own SQL. */
export interface Migration {
  version: number;
  name: string;
  sql: string;
}

export function loadMigrations(dialect: "sqlite" | "postgres"): Migration[] {
  const dir = join(migrationsDir, dialect);
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
