import { existsSync, readFileSync } from "node:fs";
import { dirname, join, resolve } from "node:path";
import type { ClientSettings } from "./client-settings.js";
import { UsageError } from "./output.js";

/** Who a client command (`cairn mcp`, `cairn status`) talks to the server as, and where. */
export interface ClientIdentity {
  url: string;
  agentId: string;
  apiKey: string;
  /** Where the identity came from, for messages. */
  source: string;
}

/** The onboarding script's record of which agent each project directory uses (one line each). */
const connectionsFile = (dataDir: string): string => join(dataDir, "connections.tsv");

interface Connection {
  dir: string;
  agentId: string;
  url: string;
  keyFile: string;
}

/** Every recorded connection; a later line for the same directory replaces an earlier one. */
function readConnections(dataDir: string): Connection[] {
  const file = connectionsFile(dataDir);
  if (!existsSync(file)) return [];
  const byDir = new Map<string, Connection>();
  for (const line of readFileSync(file, "utf8").split("\n")) {
    const [dir, agentId, url, keyFile] = line.split("\t");
    if (dir && agentId && url && keyFile) byDir.set(dir, { dir, agentId, url, keyFile });
  }
  return [...byDir.values()];
}

/** The connection of `dir` or of the nearest directory above it that has one. */
function connectionFor(dataDir: string, dir: string): Connection | undefined {
  const connections = new Map(readConnections(dataDir).map((connection) => [connection.dir, connection]));
  for (let current = resolve(dir); ; current = dirname(current)) {
    const found = connections.get(current);
    if (found) return found;
    if (dirname(current) === current) return undefined;
  }
}

function readKey(file: string): string {
  try {
    const key = readFileSync(file, "utf8").trim();
    if (key) return key;
  } catch {
    // reported below
  }
  throw new UsageError(`cannot read an agent key from ${file}`);
}

/**
 * The identity from the environment (CAIRN_AGENT_ID with CAIRN_API_KEY, or CAIRN_KEY_FILE), or else
 * from what onboarding recorded for the working directory, so that a configuration written by
 * onboarding needs nothing exported.
 */
export function clientIdentity(config: ClientSettings, cwd = process.cwd()): ClientIdentity | null {
  if (config.CAIRN_AGENT_ID && config.CAIRN_API_KEY) {
    return { url: config.CAIRN_URL, agentId: config.CAIRN_AGENT_ID, apiKey: config.CAIRN_API_KEY, source: "CAIRN_API_KEY" };
  }
  if (config.CAIRN_AGENT_ID && config.CAIRN_KEY_FILE) {
    return { url: config.CAIRN_URL, agentId: config.CAIRN_AGENT_ID, apiKey: readKey(config.CAIRN_KEY_FILE), source: config.CAIRN_KEY_FILE };
  }
  const connection = connectionFor(config.DATA_DIR, cwd);
  if (!connection) return null;
  return { url: connection.url, agentId: connection.agentId, apiKey: readKey(connection.keyFile), source: connectionsFile(config.DATA_DIR) };
}
