import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { loadConfig, type Config } from "../../src/core/config.js";
import { silentLogger } from "../../src/core/log.js";
import { startApp, type StartOptions } from "../../src/app.js";
import { fetchSend, OperationClient } from "../../src/client/operations.js";
import { databaseUrlFor } from "./database.js";
import type { RunningServer } from "../../src/http/server.js";

export interface Credentials {
  agentId: string;
  apiKey: string;
}

export interface Response<T = unknown> {
  status: number;
  headers: Headers;
  body: T;
  text: string;
}

export interface RequestOptions {
  method?: string;
  /** A value to send as JSON, or a string sent as is. */
  body?: unknown;
  as?: Credentials | null;
  headers?: Record<string, string>;
}

export interface TestServer {
  url: string;
  dataDir: string;
  config: Config;
  server: RunningServer;
  owner: Credentials;
  archivist: Credentials;
  request<T = unknown>(path: string, options?: RequestOptions): Promise<Response<T>>;
  /** The typed client (src/client) as `as`: operations by name, a refusal thrown as ApiError. */
  client(as: Credentials): OperationClient;
  /** Self-registers an agent (open on loopback) and returns its credentials. */
  agent(agentId: string): Promise<Credentials>;
  close(): Promise<void>;
}

export const tempDir = (prefix = "cairn-test-"): string => mkdtempSync(join(tmpdir(), prefix));

export function testEnv(dataDir: string, env: Record<string, string> = {}): Record<string, string> {
  const databaseUrl = databaseUrlFor(dataDir);
  return {
    DATA_DIR: dataDir,
    ...(databaseUrl === undefined ? {} : { DATABASE_URL: databaseUrl }),
    PORT: "0",
    HOST: "127.0.0.1",
    EMBEDDING_MODEL: "hash",
    RATE_LIMIT_PER_MINUTE: "0",
    ARCHIVIST: "off",
    AUDIT_LOG: "off",
    LOG_LEVEL: process.env.TEST_LOG_LEVEL ?? "error",
    ...env,
  };
}

export async function request<T = unknown>(baseUrl: string, path: string, options: RequestOptions = {}): Promise<Response<T>> {
  const headers: Record<string, string> = { ...options.headers };
  if (options.as) {
    headers["x-agent-id"] = options.as.agentId;
    headers["x-api-key"] = options.as.apiKey;
  }
  let body: string | undefined;
  if (options.body !== undefined) {
    body = typeof options.body === "string" ? options.body : JSON.stringify(options.body);
    headers["content-type"] ??= "application/json";
  }
  const init: RequestInit = { method: options.method ?? (body === undefined ? "GET" : "POST"), headers };
  if (body !== undefined) init.body = body;
  const response = await fetch(`${baseUrl}${path}`, init);
  const text = await response.text();
  let parsed: unknown = text;
  try {
    parsed = text ? JSON.parse(text) : undefined;
  } catch {
    // not JSON: keep the text
  }
  return { status: response.status, headers: response.headers, body: parsed as T, text };
}

/** The typed client to `baseUrl`, signed as `as`. */
function clientOf(baseUrl: string, as: Credentials): OperationClient {
  const send = fetchSend(baseUrl);
  return new OperationClient((wire) => send({ ...wire, headers: { ...wire.headers, "x-agent-id": as.agentId, "x-api-key": as.apiKey } }));
}

/**
 * A real server on a free loopback port with its own data directory (hash embeddings, no rate
 * limit, no archivist unless `env` says otherwise). Remove the directory with `close()`.
 */
export async function startTestServer(env: Record<string, string> = {}, options: StartOptions = {}): Promise<TestServer> {
  const dataDir = env.DATA_DIR ?? tempDir();
  const config = loadConfig(testEnv(dataDir, env));
  const server = await startApp(config, { ...(process.env.TEST_LOG_LEVEL ? {} : { log: silentLogger }), ...options });
  const credentials = JSON.parse(readFileSync(join(dataDir, "credentials.json"), "utf8")) as {
    agents: Record<string, { agent_id: string; api_key: string }>;
  };
  const credentialsOf = (id: string): Credentials => {
    const entry = credentials.agents[id];
    if (!entry) throw new Error(`no credentials for ${id}`);
    return { agentId: entry.agent_id, apiKey: entry.api_key };
  };
  const keepDir = env.DATA_DIR !== undefined;
  return {
    url: server.url,
    dataDir,
    config,
    server,
    owner: credentialsOf(config.UI_AGENT_ID),
    archivist: credentialsOf(config.ARCHIVIST_AGENT_ID),
    request: (path, requestOptions) => request(server.url, path, requestOptions),
    client: (as) => clientOf(server.url, as),
    async agent(agentId) {
      const response = await request<{ agent_id: string; api_key: string }>(server.url, "/agents/self-register", {
        body: { agent_id: agentId },
      });
      if (response.status !== 201) throw new Error(`self-register ${agentId}: ${response.status} ${response.text}`);
      return { agentId: response.body.agent_id, apiKey: response.body.api_key };
    },
    async close() {
      await server.close();
      if (!keepDir) rmSync(dataDir, { recursive: true, force: true });
    },
  };
}

/** The error body every route answers with (CONTRACT §2.1); `current_version` comes with a 412. */
export interface ErrorBody {
  detail: string;
  code: string;
  current_version?: number;
  errors?: { path: string; message: string }[];
}

/** A timestamp as the server writes it: UTC with milliseconds. */
export const RFC3339_MS = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/;
