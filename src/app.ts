import type { Config } from "./core/config.js";
import { createLogger, type Logger } from "./core/log.js";
import type { Check, CheckOptions } from "./services/admin.js";
import type { ServiceOptions } from "./services/index.js";
import type { CopyReport } from "./store/copy.js";
import type { RunningServer, ServerOptions } from "./http/server.js";
import type { OperationGateway } from "../tools/gateway.js";

// The composition root: the one module that builds the services and hands the transports their
// gateway. Entry points (the CLI, tests) start Cairn from here; adapters never see a service.
// Everything is loaded when it is used: a server starts its embedding model before it loads the
// rest, and what only one command uses (the store copy, doctor's checks) loads when it runs.

export type AppOptions = Omit<ServiceOptions, "config" | "log">;
export type { Check };

export async function openGateway(config: Config, log: Logger, options: AppOptions = {}): Promise<OperationGateway> {
  const [{ openServices }, { OperationGateway }] = await Promise.all([import("./services/index.js"), import("../tools/gateway.js")]);
  return new OperationGateway(await openServices({ ...options, config, log }));
}

export type StartOptions = AppOptions & ServerOptions & { log?: Logger };

/** Opens the services and serves them over HTTP; `close()` drains requests, then closes the store. */
export async function startApp(config: Config, options: StartOptions = {}): Promise<RunningServer> {
  const log = options.log ?? createLogger(config.LOG_LEVEL);
  // The model, the longest part of a start, loads in the embedding thread from now on, while this
  // thread loads the server and opens the store.
  const embedderLoader =
    options.embedderLoader ?? ((options.embeddings ?? true) ? (await import("./services/embedder.js")).embedderLoadingNow(config) : undefined);
  const gateway = await openGateway(config, log, embedderLoader ? { ...options, embedderLoader } : options);
  try {
    const { startServer } = await import("./http/server.js");
    return await startServer(gateway, options);
  } catch (error) {
    await gateway.close();
    throw error;
  }
}

/** `cairn migrate-store`: a SQLite store copied whole into an empty PostgreSQL database. */
export const migrateStore = async (file: string, url: string, onProgress: (table: string, rows: number) => void): Promise<CopyReport> =>
  (await import("./store/copy.js")).copySqliteToPostgres(file, url, onProgress);

/** `cairn doctor`'s checks of a data directory; they open no services and create nothing. */
export const checkInstallation = async (config: Config, options: CheckOptions): Promise<Check[]> => (await import("./services/admin.js")).runChecks(config, options);
