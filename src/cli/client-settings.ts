import { resolve } from "node:path";
import { expandHome, MCP_TOOLSETS } from "../core/setting-rules.js";
import { AGENT_ID_PATTERN } from "../wire/ids.js";
import { UsageError } from "./output.js";

/**
 * The few settings a client of a running server (the stdio bridge) reads, read without
 * src/core/config.ts: building its zod schema took longer than the bridge's whole answer to a
 * host's `initialize`. The rules are loadConfig's for these settings, and
 * test/unit/client-settings.test.ts holds them to it; settings the bridge does not use are not
 * read, so a bad one of the server's no longer stops the bridge.
 */
export interface ClientSettings {
  CAIRN_URL: string;
  CAIRN_AGENT_ID?: string | undefined;
  CAIRN_API_KEY?: string | undefined;
  CAIRN_KEY_FILE?: string | undefined;
  DATA_DIR: string;
}

export interface BridgeSettings extends ClientSettings {
  /** Only when set: otherwise the server's default tool set applies. */
  MCP_TOOLSET?: (typeof MCP_TOOLSETS)[number] | undefined;
}


const invalid = (setting: string, why: string): UsageError => new UsageError(`invalid setting ${setting}: ${why}`);

/** As loadConfig reads a variable: trimmed, and empty means unset. */
function read(env: Record<string, string | undefined>, name: string): string | undefined {
  const value = env[name]?.trim();
  return value === undefined || value === "" ? undefined : value;
}

function httpUrl(name: string, value: string): string {
  // `http:host` and `https:/path` parse as URLs but name no server; the scheme's `//` is required.
  if (!/^https?:\/\//i.test(value) || !URL.canParse(value)) throw invalid(name, "must be an http:// or https:// URL");
  return value.replace(/[\t\n\r]/g, "").replace(/\/+$/, "");
}

export function bridgeSettings(env: Record<string, string | undefined> = process.env): BridgeSettings {
  const agentId = read(env, "CAIRN_AGENT_ID");
  if (agentId !== undefined && !AGENT_ID_PATTERN.test(agentId)) throw invalid("CAIRN_AGENT_ID", `must match ${AGENT_ID_PATTERN.source}`);
  const toolset = read(env, "MCP_TOOLSET");
  if (toolset !== undefined && !(MCP_TOOLSETS as readonly string[]).includes(toolset)) throw invalid("MCP_TOOLSET", `must be one of ${MCP_TOOLSETS.join(", ")}`);
  const url = read(env, "CAIRN_URL");
  return {
    CAIRN_URL: url === undefined ? "http://127.0.0.1:8470" : httpUrl("CAIRN_URL", url),
    CAIRN_AGENT_ID: agentId,
    CAIRN_API_KEY: read(env, "CAIRN_API_KEY"),
    CAIRN_KEY_FILE: read(env, "CAIRN_KEY_FILE"),
    DATA_DIR: resolve(expandHome(read(env, "DATA_DIR") ?? "~/.cairn")),
    MCP_TOOLSET: toolset as BridgeSettings["MCP_TOOLSET"],
  };
}
