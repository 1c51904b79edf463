import { credentialsPath } from "../core/paths.js";
import { startApp } from "../app.js";
import { exitWhenSettled } from "../core/exit.js";
import { createLogger } from "../core/log.js";
import { configOrExit } from "./common.js";
import { print } from "./output.js";
import { removeServerRecord, writeServerRecord } from "./pidfile.js";
import { superviseArchivist, type Supervised } from "./supervise.js";

export async function serve(): Promise<void> {
  const config = configOrExit();
  const log = createLogger(config.LOG_LEVEL);
  const server = await startApp(config, { log }).catch((error: unknown) => {
    if ((error as NodeJS.ErrnoException).code === "EADDRINUSE") {
      throw new Error(
        `port ${config.PORT} on ${config.HOST} is in use: another cairn (\`cairn status\` tells) or another program holds it; set PORT to a free port, or PORT=0 for any`,
      );
    }
    throw error;
  });
  writeServerRecord(config.DATA_DIR, { pid: process.pid, url: server.url, started_at: new Date().toISOString() });
  let archivist: Supervised | null = null;
  let archivistLine: string | null = null;
  if (config.ARCHIVIST === "on") {
    const apiKey = server.gateway.maintenance.bootstrapKey(config.ARCHIVIST_AGENT_ID);
    if (apiKey) {
      archivist = superviseArchivist({ url: server.url, agentId: config.ARCHIVIST_AGENT_ID, apiKey, log: log.child({ component: "supervisor" }) });
      archivistLine = `  archivist      on (LLM: ${config.ARCHIVIST_LLM_PROVIDER})`;
    } else {
      log.warn("the archivist's key is not in AGENT_KEYS or the credentials file; the archivist is not started");
    }
  }
  let stopping = false;
  const stop = (signal: string): void => {
    if (stopping) {
      log.warn("second signal; exiting now", { signal });
      process.exit(1);
    }
    stopping = true;
    log.info("shutting down", { signal });
    // The archivist goes first: it saves its cursor and releases its lease through the server.
    (archivist?.stop() ?? Promise.resolve())
      .then(() => server.close())
      .then(() => removeServerRecord(config.DATA_DIR, process.pid))
      .then(
        () => exitWhenSettled(0),
        (error: unknown) => {
          log.error("shutdown failed", { error });
          return exitWhenSettled(1);
        },
      );
  };
  process.on("SIGTERM", () => stop("SIGTERM"));
  process.on("SIGINT", () => stop("SIGINT"));
  // Printed once the signals are handled: whoever waits for the first line may stop the server at once.
  print(`cairn ${server.url}`);
  if (server.publicUrl !== server.url) print(`  public URL     ${server.publicUrl}`);
  print(`  web UI         ${await server.uiUrl()}${config.UI_PASSWORD === "" ? "  (one-time login link)" : ""}`);
  print(`  api reference  ${server.url}/docs`);
  print(`  credentials    ${credentialsPath(config.DATA_DIR)}`);
  if (archivistLine) print(archivistLine);
}
