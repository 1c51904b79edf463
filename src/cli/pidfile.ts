import { existsSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { join } from "node:path";

/** What `cairn serve` records in DATA_DIR/server.pid while it runs, for `cairn status` and `cairn stop`. */
export interface ServerRecord {
  pid: number;
  url: string;
  started_at: string;
}

export const pidFile = (dataDir: string): string => join(dataDir, "server.pid");

export function writeServerRecord(dataDir: string, record: ServerRecord): void {
  writeFileSync(pidFile(dataDir), `${JSON.stringify(record)}\n`, { mode: 0o600 });
}

/** The recorded server, or null when there is none or the file is not ours. */
export function readServerRecord(dataDir: string): ServerRecord | null {
  const file = pidFile(dataDir);
  if (!existsSync(file)) return null;
  try {
    const record = JSON.parse(readFileSync(file, "utf8")) as Partial<ServerRecord>;
    return Number.isSafeInteger(record.pid) && typeof record.url === "string" ? (record as ServerRecord) : null;
  } catch {
    return null;
  }
}

/** Removes the record if it is still this process's: a newer server may have replaced it. */
export function removeServerRecord(dataDir: string, pid: number): void {
  if (readServerRecord(dataDir)?.pid === pid) rmSync(pidFile(dataDir), { force: true });
}

/** Whether a process with this pid exists (signal 0 checks without signalling). */
export function isRunning(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (error) {
    return (error as NodeJS.ErrnoException).code === "EPERM";
  }
}
