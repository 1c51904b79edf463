import { cliPath } from "../core/paths.js";
import { runBridge } from "../mcp/bridge.js";
import { bridgeSettings } from "./client-settings.js";
import { clientIdentity } from "./identity.js";
import { printError, UsageError } from "./output.js";

/** `cairn mcp`: the stdio transport, bridging to the server at CAIRN_URL. */
export async function mcp(): Promise<void> {
  const settings = bridgeSettings();
  const identity = clientIdentity(settings);
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
    dataDir: settings.DATA_DIR,
    toolset: settings.MCP_TOOLSET,
    say: printError,
  });
}
