import { credentialsPath } from "../../tools/paths.js";
import { startServer } from "../http/server.js";
import { createLogger } from "../core/log.js";
import { configOrExit } from "./common.js";
import { print } from "./output.js";

export async function serve(): Promise<void> {
  const config = configOrExit();
  const log = createLogger(config.LOG_LEVEL);
  const server = await startServer(config, { log });
  print(`cairn ${server.url}`);
  print(`  api reference  ${server.url}/docs`);
  print(`  credentials    ${credentialsPath(config.DATA_DIR)}`);
  let stopping = false;
  const stop = (signal: string): void => {
    if (stopping) {
      log.warn("second signal; exiting now", { signal });
      process.exit(1);
    }
    stopping = true;
    log.info("shutting down", { signal });
    server.close().then(
      () => process.exit(0),
      (error: unknown) => {
        log.error("shutdown failed", { error });
        process.exit(1);
      },
    );
  };
  process.on("SIGTERM", () => stop("SIGTERM"));
  process.on("SIGINT", () => stop("SIGINT"));
}
