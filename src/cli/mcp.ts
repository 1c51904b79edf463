import { cliPath } from "../core/paths.js";
import { runBridge } from "../mcp/bridge.js";
import { configOrExit } from "./common.js";
import { clientIdentity } from "./identity.js";
import { printError, UsageError } from "./output.js";

/** `cairn mcp`: the stdio transport, bridging to the server at CAIRN_URL. */
export async function mcp(): Promise<void> {
  const config = configOrExit();
  const identity = clientIdentity(config);
  if (!identity) {
    throw new UsageError(
      "cairn mcp needs an agent: CAIRN_AGENT_ID with CAIRN_API_KEY or CAIRN_KEY_FILE, or a directory connected by onboarding (curl URL/onboard | sh)",
    );
  }
  await runBridge({
    url: identity.url,
    agentId: identity.agentId,
    apiKey: identity.apiKey,
    cliPath,
    dataDir: config.DATA_DIR,
    // Only an explicit setting overrides the server's default tool set.
    toolset: process.env.MCP_TOOLSET?.trim() ? config.MCP_TOOLSET : undefined,
    say: printError,
  });
}
