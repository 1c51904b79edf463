import { describe, expect, it } from "vitest";
import { bridgeSettings } from "../../src/cli/client-settings.js";
import { loadConfig } from "../../src/core/config.js";

/** What loadConfig makes of `env`: the settings, or the name of the setting it refused. */
function configOutcome(env: Record<string, string>) {
  try {
    const config = loadConfig(env);
    return { CAIRN_URL: config.CAIRN_URL, CAIRN_AGENT_ID: config.CAIRN_AGENT_ID, CAIRN_API_KEY: config.CAIRN_API_KEY, CAIRN_KEY_FILE: config.CAIRN_KEY_FILE, DATA_DIR: config.DATA_DIR, MCP_TOOLSET: env.MCP_TOOLSET?.trim() ? config.MCP_TOOLSET : undefined };
  } catch (error) {
    return { refused: /^invalid setting (\w+)/.exec((error as Error).message)?.[1] };
  }
}

function bridgeOutcome(env: Record<string, string>) {
  try {
    return { ...bridgeSettings(env) };
  } catch (error) {
    return { refused: /^invalid setting (\w+)/.exec((error as Error).message)?.[1] };
  }
}

// The bridge reads its settings without the zod schema (it costs more than the bridge's answer);
// it must still read them as the server's configuration does.
describe("the stdio bridge's settings", () => {
  it.each([
    {},
    { CAIRN_URL: "http://example.org:8470/" },
    { CAIRN_URL: "  https://cairn.example.org//  " },
    { CAIRN_URL: "http://[::1]:9000" },
    { CAIRN_URL: "ftp://example.org" },
    { CAIRN_URL: "http:example.org" },
    { CAIRN_URL: "not a url" },
    { CAIRN_URL: "   " },
    { CAIRN_AGENT_ID: "agent-1_b" },
    { CAIRN_AGENT_ID: "Agent" },
    { CAIRN_AGENT_ID: "-agent" },
    { CAIRN_AGENT_ID: "a".repeat(65) },
    { CAIRN_AGENT_ID: " agent " },
    { CAIRN_API_KEY: " cairn_key ", CAIRN_KEY_FILE: " /tmp/key " },
    { MCP_TOOLSET: "core" },
    { MCP_TOOLSET: "all" },
    { MCP_TOOLSET: "everything" },
    { MCP_TOOLSET: "" },
    { DATA_DIR: "~/elsewhere" },
    { DATA_DIR: "relative/dir" },
    { DATA_DIR: "~" },
  ])("reads %j as loadConfig does", (env: Record<string, string>) => {
    expect(bridgeOutcome(env)).toEqual(configOutcome(env));
  });
});
