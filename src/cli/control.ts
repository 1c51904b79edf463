import { setTimeout as sleep } from "node:timers/promises";
import { configOrExit } from "./common.js";
import { print, printError } from "./output.js";
import { isRunning, pidFile, readServerRecord, removeServerRecord } from "./pidfile.js";

const STOP_WAIT_MS = 15_000;

async function health(url: string): Promise<Record<string, unknown> | null> {
  try {
    const response = await fetch(`${url}/health`, { signal: AbortSignal.timeout(2000) });
    return response.ok ? ((await response.json()) as Record<string, unknown>) : null;
  } catch {
    return null;
  }
}

/** `cairn status`: whether a server answers at CAIRN_URL, its health, and the one recorded for DATA_DIR. Exit 0 when one answers. */
export async function status(): Promise<boolean> {
  const config = configOrExit();
  const answer = await health(config.CAIRN_URL);
  if (answer) print(`cairn is running at ${config.CAIRN_URL}: ${JSON.stringify(answer)}`);
  else print(`no cairn server answers at ${config.CAIRN_URL}`);
  const record = readServerRecord(config.DATA_DIR);
  if (record && isRunning(record.pid)) {
    print(`server for ${config.DATA_DIR}: pid ${record.pid} at ${record.url}, started ${record.started_at}`);
    if (!answer && record.url !== config.CAIRN_URL) {
      const other = await health(record.url);
      if (other) print(`  it answers at ${record.url} (cairn's commands find it by this DATA_DIR; an agent's cairn mcp needs CAIRN_URL set to it)`);
    }
  } else if (record) {
    print(`server for ${config.DATA_DIR}: none (${pidFile(config.DATA_DIR)} names pid ${record.pid}, which is not running)`);
  }
  return answer !== null;
}

/** `cairn stop`: stops the server recorded for DATA_DIR and waits for it to exit. */
export async function stop(): Promise<boolean> {
  const config = configOrExit();
  const record = readServerRecord(config.DATA_DIR);
  if (!record || !isRunning(record.pid)) {
    if (record) removeServerRecord(config.DATA_DIR, record.pid);
    print(`no cairn server is running for ${config.DATA_DIR}`);
    return true;
  }
  process.kill(record.pid, "SIGTERM");
  const deadline = Date.now() + STOP_WAIT_MS;
  while (isRunning(record.pid)) {
    if (Date.now() > deadline) {
      printError(`cairn server pid ${record.pid} did not stop within ${STOP_WAIT_MS / 1000} s`);
      return false;
    }
    await sleep(100);
  }
  removeServerRecord(config.DATA_DIR, record.pid);
  print(`stopped the cairn server (pid ${record.pid}) at ${record.url}`);
  return true;
}
