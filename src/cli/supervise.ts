import { spawn, type ChildProcess } from "node:child_process";
import { hostname } from "node:os";
import { cliPath } from "../core/paths.js";
import type { Logger } from "../core/log.js";

const CLI = cliPath;
const STABLE_RUN_MS = 60_000;
const MAX_BACKOFF_MS = 60_000;
const STOP_GRACE_MS = 10_000;

export interface Supervised {
  /** The running child's pid, or null while it is down. */
  readonly pid: number | null;
  stop(): Promise<void>;
}

/**
 * Runs `cairn archivist` as a child of the server with the archivist's credentials, restarting it
 * with exponential backoff when it dies (the backoff resets after a minute of running), and
 * stopping it with the server. The child keeps one lease holder name across restarts, so a
 * restarted archivist takes its lease back at once instead of waiting out the TTL.
 */
export function superviseArchivist(options: { url: string; agentId: string; apiKey: string; log: Logger }): Supervised {
  const { log } = options;
  let child: ChildProcess | null = null;
  let stopping = false;
  let failures = 0;
  let restartTimer: NodeJS.Timeout | null = null;
  const holder = `serve:${hostname()}:${process.pid}`;

  const launch = (): void => {
    const startedAt = Date.now();
    const env = { ...process.env, CAIRN_URL: options.url, CAIRN_AGENT_ID: options.agentId, CAIRN_API_KEY: options.apiKey, ARCHIVIST_HOLDER: holder };
    const spawned = spawn(process.execPath, [CLI, "archivist"], { env, stdio: ["ignore", "inherit", "inherit", "ipc"] });
    child = spawned;
    log.info("archivist started", { pid: spawned.pid });
    spawned.once("exit", (code, signal) => {
      child = null;
      if (stopping) return;
      failures = Date.now() - startedAt >= STABLE_RUN_MS ? 1 : failures + 1;
      const delay = Math.min(MAX_BACKOFF_MS, 1000 * 2 ** (failures - 1));
      log.warn("archivist exited; restarting", { code, signal, restart_in_ms: delay });
      restartTimer = setTimeout(launch, delay);
    });
    spawned.once("error", (error) => log.error("archivist could not start", { error }));
  };
  launch();

  return {
    get pid() {
      return child?.pid ?? null;
    },
    async stop() {
      stopping = true;
      if (restartTimer) clearTimeout(restartTimer);
      const running = child;
      if (!running || running.exitCode !== null || running.signalCode !== null) return;
      const exited = new Promise<void>((resolve) => running.once("exit", () => resolve()));
      running.kill("SIGTERM");
      const timer = setTimeout(() => running.kill("SIGKILL"), STOP_GRACE_MS);
      await exited;
      clearTimeout(timer);
    },
  };
}
