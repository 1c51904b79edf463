/** Checks and copies of the database as a whole, for `cairn doctor` and `cairn backup`. */
export interface Maintenance {
  /** "ok", or what the database's own integrity check found. */
  integrityCheck(): Promise<string>;
  foreignKeyViolations(): Promise<number>;
  /** Null when the keyword index matches its content, else the problem. */
  keywordIndexProblem(): Promise<string | null>;
  /** The schema version the database is at, and the newest this code knows. */
  schema(): Promise<{ version: number; latest: number }>;
  /** What the database takes on disk: per file for SQLite (its WAL too), the database for PostgreSQL. */
  storageSizes(): Promise<{ name: string; bytes: number }[]>;
  /** A consistent copy of the whole database in `file`; returns its size in pages. */
  backupTo(file: string): Promise<number>;
}
