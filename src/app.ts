import type { Config } from "./core/config.js";
import { createLogger, type Logger } from "./core/log.js";
import { runChecks, type Check, type CheckOptions } from "./services/admin.js";
import { openServices, type ServiceOptions } from "./services/index.js";
import { copySqliteToPostgres, type CopyReport } from "./store/copy.js";
import { startServer, type RunningServer, type ServerOptions } from "./http/server.js";
import { OperationGateway } from "../tools/gateway.js";

// The composition root: the one module that builds the services and hands the transports their
// gateway. Entry points (the CLI, tests) start Cairn from here; adapters never see a service.

export type AppOptions = Omit<ServiceOptions, "config" | "log">;
export type { Check };

export async function openGateway(config: Config, log: Logger, options: AppOptions = {}): Promise<OperationGateway> {
  return new OperationGateway(await openServices({ ...options, config, log }));
}

export type StartOptions = AppOptions & ServerOptions & { log?: Logger };

/** Opens the services and serves them over HTTP; `close()` drains requests, then closes the store. */
export async function startApp(config: Config, options: StartOptions = {}): Promise<RunningServer> {
  const log = options.log ?? createLogger(config.LOG_LEVEL);
  const gateway = await openGateway(config, log, options);
  try {
    return await startServer(gateway, options);
  } catch (error) {
    await gateway.close();
    throw error;
  }
}

/** `cairn migrate-store`: a SQLite store copied whole into an empty PostgreSQL database. */
export const migrateStore = (file: string, url: string, onProgress: (table: string, rows: number) => void): Promise<CopyReport> =>
  copySqliteToPostgres(file, url, onProgress);

/** `cairn doctor`'s checks of a data directory; they open no services and create nothing. */
export const checkInstallation = (config: Config, options: CheckOptions): Promise<Check[]> => runChecks(config, options);
