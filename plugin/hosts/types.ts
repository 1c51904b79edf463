/** What a host's configuration is rendered from: no secret ever, only where the key will be found. */
export interface HostContext {
  agentId: string;
  /** The server's base URL (`/mcp` is appended for the HTTP transport). */
  url: string;
  /** The environment variable that holds the agent's key on the user's machine. */
  keyVariable: string;
}

export type Transport = "stdio" | "http";

export interface ConfigFile {
  /** Where the host reads it (`~` is the user's home). */
  path: string;
  format: "json" | "toml";
  content: string;
}

export interface HostConfig {
  host: string;
  transport: Transport;
  files: ConfigFile[];
  /** A command that registers the server with the host's own CLI, when it has one. */
  command?: string;
}

export interface HostRenderer {
  host: string;
  render(context: HostContext, transport: Transport): HostConfig;
}

/** How every stdio config starts the bridge. */
export const STDIO_COMMAND = "npx";
export const STDIO_ARGS = ["cairn", "mcp"];

export const json = (value: unknown): string => `${JSON.stringify(value, null, 2)}\n`;

/** The bridge's environment, with the key as a reference in the host's own syntax. */
export const bridgeEnv = (context: HostContext, keyReference: string): Record<string, string> => ({
  CAIRN_URL: context.url,
  CAIRN_AGENT_ID: context.agentId,
  CAIRN_API_KEY: keyReference,
});

export const httpHeaders = (context: HostContext, keyReference: string): Record<string, string> => ({
  "X-Agent-ID": context.agentId,
  "X-API-Key": keyReference,
});

/** A single-quoted POSIX shell word. */
export const shellWord = (value: string): string => `'${value.replace(/'/g, `'\\''`)}'`;
