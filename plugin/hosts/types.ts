// A renderer returns the record plugin_install sends, declared once in src/wire/hosts.ts.
import type { HostConfig, HostTransport } from "../../src/wire/hosts.js";

/** What a host's configuration is rendered from: no secret ever, only where the key will be found. */
export interface HostContext {
  agentId: string;
  /** The server's base URL (`/mcp` is appended for the HTTP transport). */
  url: string;
  /**
   * The command line that starts the stdio bridge, by absolute path and ending in `mcp`: an
   * installed `cairn`, or node with cairn's cli.js. Never a package name resolved at run time.
   */
  launcher: string[];
  /** The environment variable that holds the agent's key where the host runs (HTTP, and stdio without `keyFile`). */
  keyVariable: string;
  /** A file holding the key (onboarding writes one): the stdio bridge reads it, so nothing is exported. */
  keyFile?: string | undefined;
}

/** What a host's reader accepts: plain JSON, JSON with comments, JSONC (comments and trailing commas), TOML. */
export type ConfigSyntax = "json" | "json-with-comments" | "jsonc" | "toml";

export interface HostRenderer {
  host: string;
  /** What the host reads in its configuration file: onboarding merges into a file only as that. */
  syntax: ConfigSyntax;
  render(context: HostContext, transport: HostTransport): HostConfig;
}

export const json = (value: unknown): string => `${JSON.stringify(value, null, 2)}\n`;

/** The launcher split as hosts want it: a command and its arguments. */
export const launch = (context: HostContext): { command: string; args: string[] } => ({
  command: context.launcher[0] ?? "cairn",
  args: context.launcher.slice(1),
});

/**
 * The bridge's environment: the URL, the agent, and the key — as the key file's path, or as a
 * reference to the key variable in the host's own syntax.
 */
export const bridgeEnv = (context: HostContext, keyReference: string): Record<string, string> => ({
  CAIRN_URL: context.url,
  CAIRN_AGENT_ID: context.agentId,
  ...(context.keyFile !== undefined ? { CAIRN_KEY_FILE: context.keyFile } : { CAIRN_API_KEY: keyReference }),
});

export const httpHeaders = (context: HostContext, keyReference: string): Record<string, string> => ({
  "X-Agent-ID": context.agentId,
  "X-API-Key": keyReference,
});

/** A single-quoted POSIX shell word. */
export const shellWord = (value: string): string => `'${value.replace(/'/g, `'\\''`)}'`;
