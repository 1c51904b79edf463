import { runArchivist } from "../../archivist/main.js";
import { createLogger } from "../core/log.js";
import { configOrExit } from "./common.js";
import { UsageError } from "./output.js";

/** `cairn archivist`: the archivist process, as `serve` spawns it or run on its own against CAIRN_URL. */
export async function archivist(): Promise<void> {
  const config = configOrExit();
  if (!config.CAIRN_API_KEY) throw new UsageError("CAIRN_API_KEY is required: the archivist's key (see credentials.json in DATA_DIR)");
  const agentId = config.CAIRN_AGENT_ID ?? config.ARCHIVIST_AGENT_ID;
  const log = createLogger(config.LOG_LEVEL, { component: "archivist" });
  await runArchivist(config, { url: config.CAIRN_URL, agentId, apiKey: config.CAIRN_API_KEY }, log);
}
