import { fileURLToPath } from "node:url";
import { runBridge } from "../mcp/bridge.js";
import { configOrExit } from "./common.js";
import { printError, UsageError } from "./output.js";

/** `cairn mcp`: the stdio transport, bridging to the server at CAIRN_URL. */
export async function mcp(): Promise<void> {
  const config = configOrExit();
  if (!config.CAIRN_AGENT_ID || !config.CAIRN_API_KEY) {
    throw new UsageError("cairn mcp needs CAIRN_AGENT_ID and CAIRN_API_KEY (an agent's id and key; see `cairn agent add`)");
  }
  await runBridge({
    url: config.CAIRN_URL,
    agentId: config.CAIRN_AGENT_ID,
    apiKey: config.CAIRN_API_KEY,
    cliPath: fileURLToPath(new URL("../cli.js", import.meta.url)),
    say: printError,
  });
}
