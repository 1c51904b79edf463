import { existsSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { join } from "node:path";

/** What `cairn serve` records in DATA_DIR while it runs, for `cairn status` and `cairn stop`. */
export interface ServerRecord {
  pid: number;
  url: string;
  started_at: string;
}

// Two files: `server.pid` holds the pid alone, as every pid file does (`kill $(cat server.pid)`),
// and `server.json` the record with the URL and start time that `cairn status` shows.
export const pidFile = (dataDir: string): string => join(dataDir, "server.pid");
export const recordFile = (dataDir: string): string => join(dataDir, "server.json");

export function writeServerRecord(dataDir: string, record: ServerRecord): void {
  writeFileSync(recordFile(dataDir), `${JSON.stringify(record)}\n`, { mode: 0o600 });
  writeFileSync(pidFile(dataDir), `${record.pid}\n`, { mode: 0o600 });
}

const readText = (file: string): string | null => {
  try {
    return existsSync(file) ? readFileSync(file, "utf8") : null;
  } catch {
    return null;
  }
};

const isRecord = (value: Partial<ServerRecord> | null): value is ServerRecord =>
  value !== null && Number.isSafeInteger(value.pid) && typeof value.url === "string" && typeof value.started_at === "string";

function parseRecord(text: string | null): ServerRecord | null {
  if (text === null) return null;
  try {
    const value = JSON.parse(text) as Partial<ServerRecord> | null;
    return isRecord(value) ? value : null;
  } catch {
    return null;
  }
}

/**
 * The recorded server, or null when there is none or the files are not ours. The pid file has the
 * last word: a record that names another pid is from an earlier server. A pid file holding the
 * whole record is what earlier versions wrote, still read so that a server they started stops.
 */
export function readServerRecord(dataDir: string): ServerRecord | null {
  const pidText = readText(pidFile(dataDir));
  if (pidText === null) return null;
  const bare = /^\s*(\d+)\s*$/.exec(pidText)?.[1];
  if (bare === undefined) return parseRecord(pidText);
  const pid = Number(bare);
  if (!Number.isSafeInteger(pid)) return null;
  const record = parseRecord(readText(recordFile(dataDir)));
  return record?.pid === pid ? record : { pid, url: "(unknown)", started_at: "(unknown)" };
}

/** Removes the record if it is still this process's: a newer server may have replaced it. */
export function removeServerRecord(dataDir: string, pid: number): void {
  if (readServerRecord(dataDir)?.pid !== pid) return;
  rmSync(pidFile(dataDir), { force: true });
  rmSync(recordFile(dataDir), { force: true });
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

/** Where the operator's commands find the server, and which setting said so. */
export interface CommandServer {
  url: string;
  from: "CAIRN_URL" | "DATA_DIR";
}

/**
 * CAIRN_URL when it is set. Unset, the server running for DATA_DIR: the commands act as the owner
 * whose key that server wrote to DATA_DIR, so with `DATA_DIR` and `PORT` as the server has them
 * they reach it, where CAIRN_URL's default (port 8470) would be another server, or none.
 */
export function commandServer(config: { CAIRN_URL: string; DATA_DIR: string }, env: NodeJS.ProcessEnv = process.env): CommandServer {
  const running = (env.CAIRN_URL ?? "") === "" ? runningServerUrl(config.DATA_DIR) : null;
  return running === null ? { url: config.CAIRN_URL, from: "CAIRN_URL" } : { url: running, from: "DATA_DIR" };
}

/** The URL of the server `cairn serve` recorded for `dataDir`, while that process runs. */
export function runningServerUrl(dataDir: string): string | null {
  const record = readServerRecord(dataDir);
  return record !== null && /^https?:\/\//.test(record.url) && isRunning(record.pid) ? record.url : null;
}
