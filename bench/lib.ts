import { spawn } from "node:child_process";
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import http from "node:http";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { createInterface } from "node:readline";
import { setTimeout as sleep } from "node:timers/promises";
import { packageRoot } from "../src/core/paths.js";
import { benchDatabaseUrl, databaseEnv, ensureDatabase, releaseDatabase } from "./postgres.js";
import { processCpuMs, processMemory, type Memory } from "./proc.js";

// ---- numbers ----

export interface LatencyStats {
  n: number;
  p50: number;
  p95: number;
  p99: number;
  mean: number;
  max: number;
}

/** Nearest-rank percentile over sorted samples. */
function percentile(sorted: number[], fraction: number): number {
  if (sorted.length === 0) return Number.NaN;
  const rank = Math.min(sorted.length - 1, Math.max(0, Math.ceil(fraction * sorted.length) - 1));
  return sorted[rank] ?? Number.NaN;
}

export function latencyStats(samples: number[]): LatencyStats {
  const sorted = [...samples].sort((a, b) => a - b);
  const sum = sorted.reduce((total, value) => total + value, 0);
  return {
    n: sorted.length,
    p50: percentile(sorted, 0.5),
    p95: percentile(sorted, 0.95),
    p99: percentile(sorted, 0.99),
    mean: sorted.length ? sum / sorted.length : Number.NaN,
    max: sorted.at(-1) ?? Number.NaN,
  };
}

export const round = (value: number, digits = 1): number => Math.round(value * 10 ** digits) / 10 ** digits;

// ---- HTTP ----

export interface Reply {
  status: number;
  headers: http.IncomingHttpHeaders;
  body: string;
}

export interface Credentials {
  agentId: string;
  apiKey: string;
}

/**
 * A keep-alive client on node:http: lighter than fetch, so less of the shared CPU goes to the
 * load generator and more of each measured millisecond is the server's.
 */
export class HttpClient {
  private readonly agent: http.Agent;
  private readonly base: URL;

  constructor(baseUrl: string, sockets: number) {
    this.base = new URL(baseUrl);
    this.agent = new http.Agent({ keepAlive: true, maxSockets: sockets });
  }

  request(method: string, path: string, options: { body?: unknown; as?: Credentials; headers?: Record<string, string> } = {}): Promise<Reply> {
    const payload = options.body === undefined ? undefined : JSON.stringify(options.body);
    const headers: Record<string, string> = { ...options.headers };
    if (payload !== undefined) {
      headers["content-type"] = "application/json";
      headers["content-length"] = String(Buffer.byteLength(payload));
    }
    if (options.as) {
      headers["x-agent-id"] = options.as.agentId;
      headers["x-api-key"] = options.as.apiKey;
    }
    return new Promise((resolve, reject) => {
      const request = http.request(
        { host: this.base.hostname, port: this.base.port, method, path, headers, agent: this.agent },
        (response) => {
          const chunks: Buffer[] = [];
          response.on("data", (chunk: Buffer) => chunks.push(chunk));
          response.on("end", () =>
            resolve({ status: response.statusCode ?? 0, headers: response.headers, body: Buffer.concat(chunks).toString("utf8") }),
          );
          response.on("error", reject);
        },
      );
      request.on("error", reject);
      request.end(payload);
    });
  }

  get(path: string, as?: Credentials): Promise<Reply> {
    return this.request("GET", path, as ? { as } : {});
  }

  post(path: string, body: unknown, as?: Credentials): Promise<Reply> {
    return this.request("POST", path, as ? { body, as } : { body });
  }

  close(): void {
    this.agent.destroy();
  }

  async registerAgent(agentId: string): Promise<Credentials> {
    const reply = await this.post("/agents/self-register", { agent_id: agentId });
    if (reply.status !== 201) throw new Error(`self-register ${agentId}: ${reply.status} ${reply.body}`);
    const body = JSON.parse(reply.body) as { agent_id: string; api_key: string };
    return { agentId: body.agent_id, apiKey: body.api_key };
  }
}

export const expectStatus = (what: string, reply: Reply, status: number): Reply => {
  if (reply.status !== status) throw new Error(`${what}: ${reply.status} ${reply.body}`);
  return reply;
};

/** Registers `prefix`-1 … `prefix`-`count` through `server`. */
export async function registerMany(server: Pick<ServerProcess, "client">, prefix: string, count: number): Promise<Credentials[]> {
  const agents: Credentials[] = [];
  for (let index = 1; index <= count; index++) agents.push(await server.client.registerAgent(`${prefix}-${index}`));
  return agents;
}

// ---- load generation ----

/**
 * `clients` concurrent loops share one counter and run `operation(index, client)` until `total`
 * operations have been issued; each operation's latency is recorded, and the server's CPU time.
 */
export async function runClients(
  server: Pick<ServerProcess, "cpuMs">,
  clients: number,
  total: number,
  operation: (index: number, client: number) => Promise<void>,
): Promise<RunResult> {
  const latencies: number[] = [];
  let next = 0;
  const loop = async (client: number): Promise<void> => {
    for (let index = next++; index < total; index = next++) {
      const started = performance.now();
      await operation(index, client);
      latencies.push(performance.now() - started);
    }
  };
  const cpuBefore = server.cpuMs();
  const started = performance.now();
  await Promise.all(Array.from({ length: clients }, (_, client) => loop(client)));
  return { latencies, wallMs: performance.now() - started, serverCpuMs: server.cpuMs() - cpuBefore };
}

// ---- the server process ----

/**
 * The settings every benchmark server runs with; nothing else leaks in from the caller's environment.
 * On PostgreSQL, DATABASE_URL is the data directory's database once it has one (see startServerProcess).
 */
export function serverEnv(dataDir: string): Record<string, string> {
  return {
    PATH: process.env.PATH ?? "/usr/bin:/bin",
    HOME: process.env.HOME ?? tmpdir(),
    DATA_DIR: dataDir,
    ...databaseEnv(dataDir),
    HOST: "127.0.0.1",
    PORT: "0",
    EMBEDDING_MODEL: "use-lite",
    RATE_LIMIT_PER_MINUTE: "0",
    LOG_LEVEL: "warn",
    // The archivist is a separate client process with its own schedule; it would only add noise.
    ARCHIVIST: "off",
  };
}

export interface ServerProcess {
  url: string;
  pid: number;
  dataDir: string;
  /** performance.now() at spawn. */
  spawnedAt: number;
  client: HttpClient;
  memory(): Memory;
  cpuMs(): number;
  /** Milliseconds from spawn until `/health` answers 200 and `ready(body)` holds. */
  waitForHealth(ready?: (health: { embeddings: string; vector_index?: string }) => boolean, timeoutMs?: number): Promise<number>;
  owner(): Credentials;
  /** Exit code once the process has ended, undefined while it runs; and its last stderr lines. */
  exitCode(): number | null | undefined;
  stderrTail(): string;
  stop(): Promise<void>;
}

export const newDataDir = (): string => mkdtempSync(join(tmpdir(), "cairn-bench-"));

/** Removes a data directory and, on PostgreSQL, drops its database. */
export async function removeDataDir(dataDir: string): Promise<void> {
  rmSync(dataDir, { recursive: true, force: true });
  await releaseDatabase(dataDir);
}

/** A server ready to be timed: its model loaded, and its HNSW index (SQLite, large stores) loaded or built. */
export const embeddingsAndIndexReady = (health: { embeddings: string; vector_index?: string; vector_mirror?: string }): boolean =>
  health.embeddings === "ready" && health.vector_index !== "building" && health.vector_mirror !== "building";

/** BENCH_SERVER_ENV='{"VECTOR_ANN_THRESHOLD":"5000"}': settings every server started gets, over the benchmark's own (A/B runs). */
function extraServerEnv(): Record<string, string> {
  const raw = process.env.BENCH_SERVER_ENV;
  if (!raw) return {};
  const parsed: unknown = JSON.parse(raw);
  if (typeof parsed !== "object" || parsed === null || Object.values(parsed).some((value) => typeof value !== "string")) {
    throw new Error("BENCH_SERVER_ENV must be a JSON object of strings");
  }
  return parsed as Record<string, string>;
}

/**
 * Spawns `node dist/src/cli.js serve` and resolves once it has printed its URL. With
 * BENCH_DATABASE_URL set and no DATABASE_URL in `env`, the data directory gets a fresh database
 * (unless it has one: a seeded copy, or an earlier server's), created before the spawn is timed.
 */
export async function startServerProcess(dataDir: string, sockets = 16, env: Record<string, string> = {}): Promise<ServerProcess> {
  if (benchDatabaseUrl() && env.DATABASE_URL === undefined) await ensureDatabase(dataDir);
  const spawnedAt = performance.now();
  // BENCH_SERVER_NODE_ARGS="--cpu-prof --cpu-prof-dir=/tmp/prof" profiles the server under load.
  const nodeArgs = (process.env.BENCH_SERVER_NODE_ARGS ?? "").split(" ").filter(Boolean);
  const child = spawn(process.execPath, [...nodeArgs, join(packageRoot, "dist", "src", "cli.js"), "serve"], {
    cwd: packageRoot,
    env: { ...serverEnv(dataDir), ...env, ...extraServerEnv() },
    stdio: ["ignore", "pipe", "pipe"],
  });
  let stderr = "";
  child.stderr.on("data", (chunk: Buffer) => {
    stderr = (stderr + chunk.toString("utf8")).slice(-8000);
  });
  let exitCode: number | null | undefined;
  const exited = new Promise<number | null>((resolve) =>
    child.once("exit", (code, signal) => {
      exitCode = code ?? (signal ? -1 : null);
      resolve(code);
    }),
  );
  return new Promise((resolve, reject) => {
    const lines = createInterface({ input: child.stdout });
    const failed = (why: string): void => reject(new Error(`server ${why}\n${stderr}`));
    void exited.then((code) => failed(`exited with code ${code} before printing its url`));
    lines.once("line", (line) => {
      const url = /^cairn (http:\/\/\S+)/.exec(line)?.[1];
      if (!url || child.pid === undefined) {
        failed(`printed an unexpected first line: ${line}`);
        return;
      }
      lines.on("line", () => undefined);
      const pid = child.pid;
      const client = new HttpClient(url, sockets);
      resolve({
        url,
        pid,
        dataDir,
        spawnedAt,
        client,
        memory: () => processMemory(pid),
        cpuMs: () => processCpuMs(pid),
        async waitForHealth(ready = () => true, timeoutMs = 180_000) {
          const deadline = performance.now() + timeoutMs;
          for (;;) {
            const reply = await client.get("/health").catch(() => null);
            if (reply?.status === 200 && ready(JSON.parse(reply.body) as { embeddings: string })) {
              return performance.now() - spawnedAt;
            }
            if (performance.now() > deadline) throw new Error(`server not healthy within ${timeoutMs} ms\n${stderr}`);
            await sleep(5);
          }
        },
        owner() {
          const file = JSON.parse(readFileSync(join(dataDir, "credentials.json"), "utf8")) as {
            agents: Record<string, { agent_id: string; api_key: string }>;
          };
          const human = file.agents.human;
          if (!human) throw new Error("credentials.json has no human agent");
          return { agentId: human.agent_id, apiKey: human.api_key };
        },
        exitCode: () => exitCode,
        stderrTail: () => stderr,
        async stop() {
          client.close();
          child.kill("SIGTERM");
          const timer = setTimeout(() => child.kill("SIGKILL"), 20_000);
          await exited;
          clearTimeout(timer);
        },
      });
    });
  });
}

/** Runs `body` against a fresh server on `dataDir`, then stops it and removes the directory (and its database). */
export async function withServer<T>(
  dataDir: string,
  sockets: number,
  body: (server: ServerProcess) => Promise<T>,
  env: Record<string, string> = {},
): Promise<T> {
  const server = await startServerProcess(dataDir, sockets, env);
  try {
    return await body(server);
  } catch (error) {
    const state = server.exitCode() === undefined ? "still running" : `exited with ${server.exitCode()}`;
    const message = error instanceof Error ? error.message : String(error);
    throw new Error(`${message}\n(server ${state}; its stderr:)\n${server.stderrTail() || "(empty)"}`, { cause: error });
  } finally {
    await server.stop();
    await removeDataDir(dataDir);
  }
}

// ---- results ----

export interface Row {
  scenario: string;
  n: number;
  p50Ms: number | null;
  p95Ms: number | null;
  opsPerSec: number | null;
  /** Server CPU time per operation. */
  cpuMsPerOp: number | null;
  rssMb: number | null;
  note?: string;
}

export interface Target {
  what: string;
  goal: string;
  measured: string;
  met: boolean | null;
}

export interface Section {
  name: string;
  title: string;
  rows: Row[];
  targets: Target[];
  details: Record<string, unknown>;
}

export const memoryNote = (memory: Memory): string => `anon ${Math.round(memory.anonMb)} + file ${Math.round(memory.fileMb)} MB`;

/** Whether a measured value meets its goal; null when there is nothing to judge. */
export const judge = (value: number | null | undefined, meets: (value: number) => boolean): boolean | null =>
  value === null || value === undefined || Number.isNaN(value) ? null : meets(value);

export interface RunResult {
  latencies: number[];
  wallMs: number;
  /** Server CPU ms used during the run. */
  serverCpuMs: number;
}

export function rowOf(scenario: string, run: RunResult, rssMb: number | null, note?: string): Row {
  const stats = latencyStats(run.latencies);
  return {
    scenario,
    n: stats.n,
    p50Ms: round(stats.p50, 2),
    p95Ms: round(stats.p95, 2),
    opsPerSec: round((stats.n * 1000) / run.wallMs, 1),
    cpuMsPerOp: round(run.serverCpuMs / stats.n, 2),
    rssMb,
    ...(note === undefined ? {} : { note }),
  };
}

/** Sequential samples in ms as a row: ops/s from their sum (one request at a time), no CPU figure. */
export function samplesRow(scenario: string, samples: number[], rssMb: number | null, extra: Partial<Row> = {}): Row {
  const stats = latencyStats(samples);
  const wall = samples.reduce((sum, value) => sum + value, 0);
  return {
    scenario,
    n: stats.n,
    p50Ms: round(stats.p50, 2),
    p95Ms: round(stats.p95, 2),
    opsPerSec: wall > 0 ? round((stats.n * 1000) / wall, 1) : null,
    cpuMsPerOp: null,
    rssMb,
    ...extra,
  };
}

export type Progress = (message: string) => void;

export const progress: Progress = (message) => process.stderr.write(`  · ${message}\n`);

/** Stops every server `startServerGroup` started and removes their data directories. */
export async function stopServerGroup(started: ServerProcess[]): Promise<void> {
  await Promise.all(started.map((server) => server.stop()));
  await Promise.all(started.map((server) => removeDataDir(server.dataDir)));
}

/**
 * Starts `count` servers on one PostgreSQL database, each with its own data directory, and waits
 * until each can embed. The first starts alone: it creates the owner and the identities the others
 * then find in the store, and the key the database's secrets are encrypted with, which every other
 * server is given (docs/operations.md, "Running several servers"). Each is pushed onto `started`
 * as it starts, so a caller can stop them all whatever fails.
 */
export async function startServerGroup(count: number, env: Record<string, string>, sockets: number, started: ServerProcess[]): Promise<ServerProcess[]> {
  const start = async (secretKey?: Buffer): Promise<ServerProcess> => {
    const dataDir = newDataDir();
    if (secretKey) writeFileSync(join(dataDir, "secret.key"), secretKey, { mode: 0o600 });
    const server = await startServerProcess(dataDir, sockets, env);
    started.push(server);
    await server.waitForHealth((health) => health.embeddings === "ready");
    return server;
  };
  const first = await start();
  const secretKey = readFileSync(join(first.dataDir, "secret.key"));
  return [first, ...(await Promise.all(Array.from({ length: count - 1 }, () => start(secretKey))))];
}
