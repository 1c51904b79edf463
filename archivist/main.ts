import type { Config } from "../src/core/config.js";
import type { Logger } from "../src/core/log.js";
import { Archivist } from "./archivist.js";
import { archivistSettings } from "./settings.js";

/**
 * Runs the archivist until SIGTERM or SIGINT (or, when `serve` started it, until the server goes
 * away), then stops: it saves its stream cursor and releases the lease for a successor.
 */
export async function runArchivist(config: Config, credentials: { url: string; agentId: string; apiKey: string }, log: Logger): Promise<void> {
  const archivist = new Archivist(archivistSettings(config, credentials), log);
  archivist.start();
  await new Promise<void>((resolve) => {
    let stopping = false;
    const stop = (reason: string): void => {
      if (stopping) return;
      stopping = true;
      log.info("archivist stopping", { reason });
      archivist.stop().then(resolve, (error: unknown) => {
        log.error("archivist stop failed", { error });
        resolve();
      });
    };
    process.once("SIGTERM", () => stop("SIGTERM"));
    process.once("SIGINT", () => stop("SIGINT"));
    // Started by `serve` with an IPC channel: the channel closes when the server process ends, however it ends.
    if (process.send) process.once("disconnect", () => stop("server gone"));
  });
}
