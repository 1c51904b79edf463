import { spawn } from "node:child_process";
import { closeSync, mkdirSync, openSync } from "node:fs";
import { join } from "node:path";
import { setTimeout as sleep } from "node:timers/promises";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import { Server } from "@modelcontextprotocol/sdk/server/index.js";
import { StdioServerTransport } from "@modelcontextprotocol/sdk/server/stdio.js";
import {
  CallToolRequestSchema,
  CallToolResultSchema,
  EmptyResultSchema,
  GetPromptRequestSchema,
  GetPromptResultSchema,
  ListPromptsRequestSchema,
  ListPromptsResultSchema,
  ListResourcesRequestSchema,
  ListResourcesResultSchema,
  ListResourceTemplatesRequestSchema,
  ListResourceTemplatesResultSchema,
  ListToolsRequestSchema,
  ListToolsResultSchema,
  ReadResourceRequestSchema,
  ReadResourceResultSchema,
  ResourceUpdatedNotificationSchema,
  SubscribeRequestSchema,
  UnsubscribeRequestSchema,
} from "@modelcontextprotocol/sdk/types.js";
import { packageVersion } from "../core/paths.js";
import { TOOLSET_HEADER } from "./toolset-header.js";

export interface BridgeOptions {
  url: string;
  agentId: string;
  apiKey: string;
  /** The CLI entry to run `serve` with when a loopback server has to be started. */
  cliPath: string;
  /** Where a server this bridge starts keeps its data, log (`logs/server.log`) and pid file. */
  dataDir: string;
  /** The tool set this bridge lists (MCP_TOOLSET in its environment); the server's default when absent. */
  toolset?: string | undefined;
  /** Written to stderr: stdout carries nothing but the protocol. */
  say: (line: string) => void;
}


const LOOPBACK = new Set(["127.0.0.1", "localhost", "[::1]"]);
const START_WAIT_MS = 10_000;

async function healthy(url: string): Promise<boolean> {
  try {
    const response = await fetch(`${url}/health`, { signal: AbortSignal.timeout(1000) });
    return response.ok;
  } catch {
    return false;
  }
}

/**
 * Makes sure a server answers at `url`. Nothing answering on a loopback address means no server
 * runs on this machine yet: start `cairn serve` there in the background (its data in DATA_DIR,
 * `~/.cairn` by default) so every agent's bridge shares that one server.
 */
export async function ensureServer(options: BridgeOptions): Promise<void> {
  if (await healthy(options.url)) return;
  const target = new URL(options.url);
  if (!LOOPBACK.has(target.hostname)) throw new Error(`no Cairn server answers at ${options.url}`);
  // Its output goes to a log file: nothing may reach the host over this bridge's stdout, and a
  // server that outlives the bridge must not write to a closed pipe.
  const logDir = join(options.dataDir, "logs");
  mkdirSync(logDir, { recursive: true, mode: 0o700 });
  const logPath = join(logDir, "server.log");
  const log = openSync(logPath, "a", 0o600);
  const child = spawn(process.execPath, [options.cliPath, "serve"], {
    detached: true,
    stdio: ["ignore", log, log],
    env: { ...process.env, DATA_DIR: options.dataDir, HOST: target.hostname.replace(/^\[|\]$/g, ""), PORT: target.port || "80" },
  });
  closeSync(log);
  child.unref();
  options.say(`cairn mcp: started cairn serve (pid ${child.pid}) at ${options.url}; its log is ${logPath}`);
  const deadline = Date.now() + START_WAIT_MS;
  while (Date.now() < deadline) {
    if (await healthy(options.url)) return;
    await sleep(100);
  }
  throw new Error(`started cairn serve, but nothing answered at ${options.url} within ${START_WAIT_MS / 1000} s`);
}

/**
 * `cairn mcp`: an MCP server on stdin/stdout that forwards every request to the running server's
 * `/mcp`, as the configured agent. The tools, their schemas, the instructions and every rule are
 * the server's; the bridge only carries messages.
 */
export async function runBridge(options: BridgeOptions): Promise<void> {
  await ensureServer(options);
  const upstream = new Client({ name: "cairn-mcp-bridge", version: packageVersion });
  const headers: Record<string, string> = { "X-Agent-ID": options.agentId, "X-API-Key": options.apiKey };
  if (options.toolset) headers[TOOLSET_HEADER] = options.toolset;
  const transport = new StreamableHTTPClientTransport(new URL("/mcp", options.url), { requestInit: { headers } });
  try {
    await upstream.connect(transport);
  } catch (error) {
    const message = error instanceof Error ? error.message : String(error);
    throw new Error(/\b401\b|UNAUTHENTICATED/.test(message) ? `the server at ${options.url} refused the credentials of ${options.agentId}` : `cannot reach ${options.url}/mcp: ${message}`);
  }
  const instructions = upstream.getInstructions();
  const local = new Server(
    { name: "cairn", version: packageVersion },
    { capabilities: { tools: {}, resources: { subscribe: true }, prompts: {} }, ...(instructions === undefined ? {} : { instructions }) },
  );
  local.setRequestHandler(ListToolsRequestSchema, (request) => upstream.request({ method: "tools/list", params: request.params }, ListToolsResultSchema));
  local.setRequestHandler(CallToolRequestSchema, (request) => upstream.request({ method: "tools/call", params: request.params }, CallToolResultSchema));
  local.setRequestHandler(ListResourcesRequestSchema, (request) =>
    upstream.request({ method: "resources/list", params: request.params }, ListResourcesResultSchema),
  );
  local.setRequestHandler(ListResourceTemplatesRequestSchema, (request) =>
    upstream.request({ method: "resources/templates/list", params: request.params }, ListResourceTemplatesResultSchema),
  );
  local.setRequestHandler(ReadResourceRequestSchema, (request) => upstream.request({ method: "resources/read", params: request.params }, ReadResourceResultSchema));
  local.setRequestHandler(SubscribeRequestSchema, (request) => upstream.request({ method: "resources/subscribe", params: request.params }, EmptyResultSchema));
  local.setRequestHandler(UnsubscribeRequestSchema, (request) => upstream.request({ method: "resources/unsubscribe", params: request.params }, EmptyResultSchema));
  local.setRequestHandler(ListPromptsRequestSchema, (request) => upstream.request({ method: "prompts/list", params: request.params }, ListPromptsResultSchema));
  local.setRequestHandler(GetPromptRequestSchema, (request) => upstream.request({ method: "prompts/get", params: request.params }, GetPromptResultSchema));
  upstream.setNotificationHandler(ResourceUpdatedNotificationSchema, (notification) => local.sendResourceUpdated(notification.params));
  const closed = new Promise<void>((resolve) => {
    local.onclose = () => resolve();
    // The host closing our stdin is the end of the session; the stdio transport alone would
    // leave this process running, orphaned, with its session open on the server.
    process.stdin.once("end", () => resolve());
    process.stdin.once("close", () => resolve());
    upstream.onclose = () => resolve();
  });
  await local.connect(new StdioServerTransport());
  await closed;
  // Ends the session on the server (DELETE /mcp) rather than leaving it to idle out.
  await transport.terminateSession().catch(() => undefined);
  await upstream.close().catch(() => undefined);
}
