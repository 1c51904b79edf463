import { spawn } from "node:child_process";
import { closeSync, mkdirSync, openSync } from "node:fs";
import { join } from "node:path";
import { setTimeout as sleep } from "node:timers/promises";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import { StdioServerTransport } from "@modelcontextprotocol/sdk/server/stdio.js";
import type { JSONRPCMessage } from "@modelcontextprotocol/sdk/types.js";
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
/** How long one check waits for an answer. */
const ANSWER_WAIT_MS = 2_000;

/**
 * What the server says of this bridge's agent: accepted, refused, nothing listening there
 * (unreachable), or listening but not answering in time (slow: a busy machine, not a missing server).
 */
async function whoAmI(url: string, headers: Record<string, string>): Promise<"accepted" | "refused" | "unreachable" | "slow"> {
  try {
    const response = await fetch(`${url}/agents/me`, { headers, signal: AbortSignal.timeout(ANSWER_WAIT_MS) });
    await response.body?.cancel();
    if (response.status === 401) return "refused";
    if (!response.ok) throw new Error(`the server at ${url} answered GET /agents/me with ${response.status}`);
    return "accepted";
  } catch (error) {
    if (error instanceof Error && error.message.startsWith("the server at")) throw error;
    return (error as { name?: unknown } | null)?.name === "TimeoutError" ? "slow" : "unreachable";
  }
}

/**
 * Makes sure a server answers at `url` and accepts the agent's credentials. Nothing answering on a
 * loopback address means no server runs on this machine yet: start `cairn serve` there in the
 * background (its data in DATA_DIR, `~/.cairn` by default) so every agent's bridge shares that one
 * server.
 */
export async function ensureServer(options: BridgeOptions, headers: Record<string, string> = agentHeaders(options)): Promise<void> {
  let answer = await whoAmI(options.url, headers);
  const target = new URL(options.url);
  const loopback = LOOPBACK.has(target.hostname);
  if (!loopback && (answer === "unreachable" || answer === "slow")) throw new Error(`no Cairn server answers at ${options.url}`);
  // A local server that is there but slow is waited for: starting a second one beside it would at
  // best fail to bind its port, and at worst take the port once the first one stops.
  const deadline = Date.now() + START_WAIT_MS;
  while (answer === "slow" && Date.now() < deadline) answer = await whoAmI(options.url, headers);
  if (answer === "slow") throw new Error(`the server at ${options.url} did not answer within ${START_WAIT_MS / 1000} s`);
  if (answer === "unreachable") {
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
    const startDeadline = Date.now() + START_WAIT_MS;
    while ((answer === "unreachable" || answer === "slow") && Date.now() < startDeadline) {
      await sleep(100);
      answer = await whoAmI(options.url, headers);
    }
    if (answer === "unreachable" || answer === "slow") throw new Error(`started cairn serve, but nothing answered at ${options.url} within ${START_WAIT_MS / 1000} s`);
  }
  if (answer === "refused") throw new Error(`the server at ${options.url} refused the credentials of ${options.agentId}`);
}

function agentHeaders(options: BridgeOptions): Record<string, string> {
  const headers: Record<string, string> = { "X-Agent-ID": options.agentId, "X-API-Key": options.apiKey };
  if (options.toolset) headers[TOOLSET_HEADER] = options.toolset;
  return headers;
}

const isRequest = (message: JSONRPCMessage): message is JSONRPCMessage & { id: string | number; method: string } =>
  "method" in message && "id" in message && message.id !== undefined;

/**
 * `cairn mcp`: an MCP server on stdin/stdout that relays every message, as it is, to the running
 * server's `/mcp` as the configured agent, and every message of the server back. The host's
 * `initialize` reaches the server, which answers it with its own capabilities and instructions: the
 * tools, their schemas and every rule are the server's, and the bridge loads no more of the SDK
 * than its two transports, so a host's first answer comes soon after the process starts.
 */
export async function runBridge(options: BridgeOptions): Promise<void> {
  const headers = agentHeaders(options);
  await ensureServer(options, headers);
  const upstream = new StreamableHTTPClientTransport(new URL("/mcp", options.url), { requestInit: { headers } });
  const local = new StdioServerTransport();
  /** Requests of the host's `initialize`, whose answer names the protocol version later requests carry. */
  const initializing = new Set<string | number>();
  const sending = new Set<Promise<void>>();
  const fail = (message: JSONRPCMessage, error: unknown): void => {
    const detail = error instanceof Error ? error.message : String(error);
    options.say(`cairn mcp: ${detail}`);
    // A request the server never answered still gets an answer, so the host does not wait for ever.
    if (isRequest(message)) void local.send({ jsonrpc: "2.0", id: message.id, error: { code: -32603, message: `cannot reach ${options.url}/mcp: ${detail}` } });
  };
  local.onmessage = (message) => {
    if (isRequest(message) && message.method === "initialize") initializing.add(message.id);
    const sent = upstream.send(message).catch((error: unknown) => fail(message, error));
    sending.add(sent);
    void sent.finally(() => sending.delete(sent));
  };
  upstream.onmessage = (message) => {
    if ("id" in message && message.id !== undefined && initializing.delete(message.id) && "result" in message) {
      const version = (message.result as { protocolVersion?: unknown }).protocolVersion;
      if (typeof version === "string") upstream.setProtocolVersion(version);
    }
    void local.send(message);
  };
  const closed = new Promise<void>((resolve) => {
    local.onclose = () => resolve();
    // The host closing our stdin is the end of the session; the stdio transport alone would
    // leave this process running, orphaned, with its session open on the server.
    process.stdin.once("end", () => resolve());
    process.stdin.once("close", () => resolve());
    upstream.onclose = () => resolve();
  });
  await upstream.start();
  await local.start();
  await closed;
  // What the host sent last still reaches the server, and then the session ends there
  // (DELETE /mcp) rather than idling out.
  await Promise.allSettled([...sending]);
  await upstream.terminateSession().catch(() => undefined);
  await upstream.close().catch(() => undefined);
}
