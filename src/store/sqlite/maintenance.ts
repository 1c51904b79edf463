import type { Db } from "./db.js";

export const integrityCheck = (db: Db): string => String(db.sqlite.pragma("integrity_check", { simple: true }));

export const foreignKeyViolations = (db: Db): number => (db.sqlite.pragma("foreign_key_check") as unknown[]).length;

/** Null when the keyword index matches its content table, else the problem. */
export function keywordIndexProblem(db: Db): string | null {
  try {
    db.sqlite.exec("INSERT INTO memory_fts (memory_fts) VALUES ('integrity-check')");
    return null;
  } catch (error) {
    return error instanceof Error ? error.message : String(error);
  }
}

export const backupTo = async (db: Db, file: string): Promise<number> => (await db.sqlite.backup(file)).totalPages;
