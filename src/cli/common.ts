import { ConfigError, loadConfig, type Config } from "../core/config.js";
import { createLogger, type Logger } from "../core/log.js";
import type { OperationGateway } from "../../tools/gateway.js";
import { UsageError } from "./output.js";

export function configOrExit(): Config {
  try {
    return loadConfig();
  } catch (error) {
    if (error instanceof ConfigError) throw new UsageError(error.message);
    throw error;
  }
}

export const cliLogger = (config: Config): Logger => createLogger(config.LOG_LEVEL === "info" ? "warn" : config.LOG_LEVEL);

/** Opens the data directory for a one-shot command (no background jobs, no identity bootstrap). */
export async function withGateway<T>(
  config: Config,
  options: { embeddings: boolean },
  run: (gateway: OperationGateway) => Promise<T>,
): Promise<T> {
  // No bootstrap: identities are the server's to reconcile, with the server's own settings. Loaded
  // here, not at the top: commands that only read settings (the stdio bridge) never load the server.
  const { openGateway } = await import("../app.js");
  const gateway = await openGateway(config, cliLogger(config), { jobs: false, embeddings: options.embeddings, bootstrap: false });
  try {
    return await run(gateway);
  } finally {
    await gateway.close();
  }
}
