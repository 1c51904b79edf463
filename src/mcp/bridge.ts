import { closeSync, mkdirSync, openSync } from "node:fs";
import { join } from "node:path";
import { setTimeout as sleep } from "node:timers/promises";
import { HostWriter, readLines } from "./bridge-host.js";
import { answeredId, errorAnswer, idKey, isInitializedNotification, messagesOf, requestsOf, type JsonRpcMessage, type RequestId } from "./bridge-messages.js";
import { Upstream, UpstreamError, type HttpModule } from "./bridge-upstream.js";
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

/**
 * The largest message the bridge relays either way, in bytes: the server's own ceiling for a
 * request body (MAX_BODY_BYTES may be raised to 64 MiB), so the bridge refuses nothing some server
 * would take, and holds no more than that of a line or an event that never ends.
 */
export const MAX_MESSAGE_BYTES = 64 * 1024 * 1024;

const LOOPBACK = new Set(["127.0.0.1", "localhost", "[::1]"]);
const START_WAIT_MS = 10_000;
/** How long one check waits for an answer. */
const ANSWER_WAIT_MS = 2_000;
/** JSON-RPC's codes for what the bridge answers itself. */
const PARSE_ERROR = -32700;
const INVALID_REQUEST = -32600;
const INTERNAL_ERROR = -32603;

type Verdict = "accepted" | "refused" | "unreachable" | "slow";

/**
 * What the server says of this bridge's agent: accepted, refused, nothing listening there
 * (unreachable), or listening but not answering in time (slow: a busy machine, not a missing server).
 */
function whoAmI(http: HttpModule, url: string, headers: Record<string, string>): Promise<Verdict> {
  return new Promise((resolve, reject) => {
    const request = http.request(`${url}/agents/me`, { headers, agent: false, timeout: ANSWER_WAIT_MS }, (response) => {
      response.resume();
      const status = response.statusCode ?? 0;
      if (status === 401) resolve("refused");
      else if (status >= 200 && status < 300) resolve("accepted");
      else reject(new Error(`the server at ${url} answered GET /agents/me with ${status}`));
    });
    request.once("timeout", () => {
      request.destroy();
      resolve("slow");
    });
    request.once("error", () => resolve("unreachable"));
    request.end();
  });
}

/**
 * Makes sure a server answers at `url` and accepts the agent's credentials. Nothing answering on a
 * loopback address means no server runs on this machine yet: start `cairn serve` there in the
 * background (its data in DATA_DIR, `~/.cairn` by default) so every agent's bridge shares that one
 * server.
 */
async function ensureServer(options: BridgeOptions, http: HttpModule, headers: Record<string, string> = agentHeaders(options)): Promise<void> {
  let answer = await whoAmI(http, options.url, headers);
  const target = new URL(options.url);
  const loopback = LOOPBACK.has(target.hostname);
  if (!loopback && (answer === "unreachable" || answer === "slow")) throw new Error(`no Cairn server answers at ${options.url}`);
  // A local server that is there but slow is waited for: starting a second one beside it would at
  // best fail to bind its port, and at worst take the port once the first one stops.
  const deadline = Date.now() + START_WAIT_MS;
  while (answer === "slow" && Date.now() < deadline) answer = await whoAmI(http, options.url, headers);
  if (answer === "slow") throw new Error(`the server at ${options.url} did not answer within ${START_WAIT_MS / 1000} s`);
  if (answer === "unreachable") {
    // Its output goes to a log file: nothing may reach the host over this bridge's stdout, and a
    // server that outlives the bridge must not write to a closed pipe.
    const { spawn } = await import("node:child_process");
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
      answer = await whoAmI(http, options.url, headers);
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

const asError = (error: unknown): Error => (error instanceof Error ? error : new Error(String(error)));

/** Nothing listens at the address: the request never reached a server, so sending it again is safe. */
const connectionRefused = (error: unknown): boolean => (error as { code?: unknown } | null)?.code === "ECONNREFUSED";

/**
 * `cairn mcp`: an MCP server on stdin/stdout that relays every message, as it is, to the running
 * server's `/mcp` as the configured agent, and every message of the server back. The host's
 * `initialize` reaches the server, which answers it with its own capabilities and instructions.
 * The check that a server runs and takes the agent (starting one on loopback if none does) runs
 * beside the host's first message rather than before it; a message that finds nothing listening
 * waits for that check and is sent again. The bridge loads node's HTTP client and its own few
 * modules, so a host's first answer comes soon after the process starts.
 */
export async function runBridge(options: BridgeOptions): Promise<void> {
  const headers = agentHeaders(options);
  const endpoint = new URL("/mcp", options.url);
  const http: HttpModule = endpoint.protocol === "https:" ? await import("node:https") : await import("node:http");
  const host = new HostWriter(process.stdout);
  /** The host's requests the server has not answered yet, by idKey. */
  const pending = new Map<string, RequestId>();
  /** The host's `initialize` requests, whose answer names the protocol version later requests carry. */
  const initializing = new Set<string>();
  /** The host's first `initialize`, sent again (as the bridge's own) when the server loses the session. */
  let hostInitialize: JsonRpcMessage | undefined;
  /** The bridge's own requests: their answers are not the host's. */
  const own = new Set<string>();
  const answerError = (id: RequestId, code: number, message: string, data?: unknown): void => {
    if (pending.delete(idKey(id))) host.send(errorAnswer(id, code, message, data));
  };

  const upstream: Upstream = new Upstream({
    endpoint,
    http,
    headers,
    limit: MAX_MESSAGE_BYTES,
    say: options.say,
    onMessage: (message) => {
      const id = answeredId(message);
      if (id !== undefined) {
        pending.delete(idKey(id));
        const version = (message.result as { protocolVersion?: unknown } | undefined)?.protocolVersion;
        if (initializing.delete(idKey(id)) && typeof version === "string") upstream.setProtocolVersion(version);
        if (own.delete(idKey(id))) return;
      }
      host.send(message);
    },
  });

  /** Why the bridge cannot serve the host, once the check has failed. */
  let failure: Error | undefined;
  const verdict: Promise<Error | undefined> = ensureServer(options, http, headers).then(
    () => undefined,
    (error: unknown) => asError(error),
  );
  void verdict.then((error) => {
    if (!error) return;
    failure = error;
    for (const id of [...pending.values()]) answerError(id, INTERNAL_ERROR, `cairn mcp: ${error.message}`);
    upstream.close();
  });

  /**
   * Opens a new session in place of `lost`, which the server no longer knows (it restarted, or
   * the session idled out there): the host's `initialize` again, as the bridge's own request,
   * then `notifications/initialized`. The host keeps its session with the bridge and never sees
   * the server's; requests that failed with the old one are sent again in the new one. Requests
   * that find the same lost session share one reopening.
   */
  let reopening: { lost: string | undefined; done: Promise<void> } | undefined;
  let reopenings = 0;
  const reopen = (lost: string | undefined, init: JsonRpcMessage): Promise<void> => {
    if (reopening && reopening.lost === lost) return reopening.done;
    const done = (async () => {
      if (upstream.session !== lost) return;
      upstream.forgetSession();
      const id = `cairn-bridge-reopen-${++reopenings}`;
      own.add(idKey(id));
      initializing.add(idKey(id));
      try {
        await upstream.post({ ...init, id }, () => own.has(idKey(id)));
      } finally {
        own.delete(idKey(id));
        initializing.delete(idKey(id));
      }
      if (upstream.session === undefined) throw new Error("the server opened no new session");
      await upstream.post({ jsonrpc: "2.0", method: "notifications/initialized" });
      options.say(`cairn mcp: the server no longer knew this bridge's session (it restarted or the session idled out); opened a new one`);
    })();
    reopening = { lost, done };
    return done;
  };

  /**
   * The server says the session is gone (404): every request but the host's `initialize` can go
   * on in a new one, opened with the host's `initialize` (returned; undefined when it cannot).
   */
  const reopenerOf = (error: unknown, messages: JsonRpcMessage[]): JsonRpcMessage | undefined =>
    error instanceof UpstreamError && error.status === 404 && !messages.some((message) => message.method === "initialize") ? hostInitialize : undefined;

  /** The server stopped answering after the check: on loopback it is started again, as at first. */
  let restarting: Promise<void> | undefined;
  const serverBack = (): Promise<void> => (restarting ??= ensureServer(options, http, headers).finally(() => (restarting = undefined)));

  // What the host sends after `notifications/initialized` goes once the server's message stream is
  // open (see `Upstream.streamAnswered`); `initialize` and `initialized` themselves never wait.
  let streamOpen: Promise<void> = Promise.resolve();
  const post = async (payload: unknown, messages: JsonRpcMessage[], requests: { id: RequestId }[]): Promise<void> => {
    const awaiting = (): boolean => requests.some((request) => pending.has(idKey(request.id)));
    if (messages.some(isInitializedNotification)) streamOpen = upstream.streamAnswered();
    else if (!messages.some((message) => message.method === "initialize")) await streamOpen;
    // Refused (no server yet, or one stopped), then a lost session: a message is sent at most three times.
    for (let attempt = 1; ; attempt++) {
      // Sent during a reopening, a message would carry no session at all.
      await reopening?.done.catch(() => undefined);
      const session = upstream.session;
      try {
        return await upstream.post(payload, awaiting);
      } catch (error) {
        if (attempt === 3) throw error;
        const init = reopenerOf(error, messages);
        if (init) {
          await reopen(session, init);
          continue;
        }
        // Nothing listens: the check is starting a server or will say why there is none, or a
        // server that was there stopped. A refused connection never reached a server, so the
        // message is sent again.
        if (!connectionRefused(error) || (await verdict)) throw error;
        await serverBack();
      }
    }
  };

  const inFlight = new Set<Promise<void>>();
  const relay = (messages: JsonRpcMessage[], payload: unknown): void => {
    const requests = requestsOf(messages);
    for (const request of requests) {
      pending.set(idKey(request.id), request.id);
      if (request.method === "initialize") {
        initializing.add(idKey(request.id));
        hostInitialize ??= request;
      }
    }
    if (failure) {
      for (const request of requests) answerError(request.id, INTERNAL_ERROR, `cairn mcp: ${failure.message}`);
      return;
    }
    const sent = post(payload, messages, requests)
      .catch(async (error: unknown) => {
        // A refused key: the check says so, to the host and on stderr, once for every request.
        if (error instanceof UpstreamError && error.status === 401 && (await verdict)) return;
        const detail = asError(error).message;
        options.say(`cairn mcp: ${detail}`);
        const rpc = error instanceof UpstreamError ? error.rpcError : undefined;
        for (const request of requests) {
          if (rpc) answerError(request.id, rpc.code, rpc.message, rpc.data);
          else answerError(request.id, INTERNAL_ERROR, `cannot reach ${options.url}/mcp: ${detail}`);
        }
      })
      .then(() => {
        // A request the server never answered still gets an answer, so the host does not wait for ever.
        for (const request of requests) answerError(request.id, INTERNAL_ERROR, `the server at ${options.url} sent no answer to ${request.method}`);
      });
    inFlight.add(sent);
    void sent.finally(() => inFlight.delete(sent));
  };

  const refuse = (code: number, message: string): void => {
    options.say(`cairn mcp: ${message}`);
    // JSON-RPC's answer to what has no readable id.
    host.send(errorAnswer(null, code, message));
  };
  const hostClosed = new Promise<void>((resolve) => {
    readLines(process.stdin, MAX_MESSAGE_BYTES, {
      onLine: (line) => {
        let payload: unknown;
        try {
          payload = JSON.parse(line);
        } catch (error) {
          refuse(PARSE_ERROR, `Parse error: ${asError(error).message}`);
          return;
        }
        let messages: JsonRpcMessage[];
        try {
          messages = messagesOf(payload);
        } catch {
          refuse(INVALID_REQUEST, "Invalid Request: not a JSON-RPC 2.0 message");
          return;
        }
        relay(messages, payload);
      },
      onOversize: () => refuse(INVALID_REQUEST, `Invalid Request: a message larger than ${MAX_MESSAGE_BYTES} bytes was dropped`),
      onEnd: resolve,
    });
  });

  let error = await Promise.race([hostClosed.then(() => undefined), verdict.then((failed) => failed ?? hostClosed.then(() => undefined))]);
  if (!error) {
    // What the host sent last still reaches the server; a host that closed at once still learns,
    // by the exit code, whether the server took the agent.
    await Promise.allSettled([...inFlight]);
    error = await verdict;
  }
  if (error) {
    await host.flushed();
    upstream.close();
    throw error;
  }
  // The session ends on the server (DELETE /mcp) rather than idling out.
  await upstream.end();
  upstream.close();
}
