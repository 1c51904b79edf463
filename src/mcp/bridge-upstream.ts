import type * as Http from "node:http";
import type { Agent, IncomingMessage, OutgoingHttpHeaders } from "node:http";
import { setTimeout as sleep } from "node:timers/promises";
import { readEvents } from "./bridge-events.js";
import { isInitializedNotification, parseMessages, type JsonRpcMessage } from "./bridge-messages.js";

/** node:http or node:https, whichever the server's URL names: both request alike. */
export type HttpModule = Pick<typeof Http, "Agent" | "request">;

/** The server answered with an HTTP error: its status, and the JSON-RPC error its body held, if any. */
export class UpstreamError extends Error {
  constructor(
    message: string,
    readonly status: number,
    readonly rpcError?: { code: number; message: string; data?: unknown },
  ) {
    super(message);
    this.name = "UpstreamError";
  }
}

/** The GET stream's reconnection delays when the server names none (`retry:`), as the SDK's client waits. */
const FIRST_RETRY_MS = 1_000;
const MAX_RETRY_MS = 30_000;
/** Answers to the GET stream that end it: the session is gone (404) or the agent refused (401, 403). */
const FINAL_STATUSES = new Set([401, 403, 404]);
/** How many times one call's event stream is resumed before its answer is given up. */
const MAX_RESUMES = 10;
/** How long the session's end (DELETE /mcp) may take when the bridge closes. */
const END_WAIT_MS = 2_000;
/** The longest the host's messages after `notifications/initialized` wait for the GET stream to be answered. */
const STREAM_WAIT_MS = 5_000;

const mediaType = (response: IncomingMessage): string => (response.headers["content-type"] ?? "").split(";")[0]?.trim().toLowerCase() ?? "";

async function drain(response: IncomingMessage): Promise<void> {
  response.resume();
  await new Promise<void>((resolve) => {
    response.once("end", resolve);
    response.once("close", resolve);
  });
}

/** A body read whole, refused (the connection cut) past `limit` bytes. */
function readBody(response: IncomingMessage, limit: number): Promise<string> {
  return new Promise((resolve, reject) => {
    const declared = Number(response.headers["content-length"] ?? 0);
    if (declared > limit) {
      response.destroy();
      reject(new Error(`the server's answer of ${declared} bytes is larger than the bridge's limit of ${limit}`));
      return;
    }
    const parts: Buffer[] = [];
    let size = 0;
    response.on("data", (chunk: Buffer) => {
      size += chunk.length;
      if (size > limit) {
        response.destroy();
        reject(new Error(`the server's answer is larger than the bridge's limit of ${limit} bytes`));
      } else parts.push(chunk);
    });
    response.once("end", () => resolve(Buffer.concat(parts, size).toString("utf8")));
    response.once("error", reject);
    response.once("close", () => reject(new Error("the server closed the connection before its answer ended")));
  });
}

/** An HTTP error status as an UpstreamError, with the JSON-RPC error the server put in the body. */
async function httpError(response: IncomingMessage, what: string, limit: number): Promise<UpstreamError> {
  const status = response.statusCode ?? 0;
  const text = await readBody(response, Math.min(limit, 64 * 1024)).catch(() => "");
  let rpcError: UpstreamError["rpcError"];
  try {
    const body = JSON.parse(text) as { error?: { code?: unknown; message?: unknown; data?: unknown } };
    if (typeof body.error?.code === "number" && typeof body.error.message === "string") {
      rpcError = { code: body.error.code, message: body.error.message, ...(body.error.data === undefined ? {} : { data: body.error.data }) };
    }
  } catch {
    // not JSON: the status and text say it
  }
  const detail = rpcError?.message ?? (text.trim().slice(0, 300) || response.statusMessage || "");
  return new UpstreamError(`the server answered ${what} with ${status}${detail ? `: ${detail}` : ""}`, status, rpcError);
}

export interface UpstreamOptions {
  /** The server's `/mcp`. */
  endpoint: URL;
  http: HttpModule;
  /** Sent with every request: the agent's credentials and the tool set. */
  headers: Record<string, string>;
  /** The largest answer or event the bridge takes, in bytes. */
  limit: number;
  /** Every message of the server, in the order it sent them. */
  onMessage: (message: JsonRpcMessage) => void;
  say: (line: string) => void;
}

/**
 * The client side of MCP's Streamable HTTP transport, over node:http: `fetch` loads undici on first
 * use, which cost the bridge more time than everything else it loads (see docs/decisions.md).
 * A message is POSTed; its answer is JSON or an SSE stream of messages; the server's own messages
 * come on a GET stream opened once the host's `notifications/initialized` is accepted.
 */
export class Upstream {
  private readonly agent: Agent;
  private readonly closing = new AbortController();
  private sessionId: string | undefined;
  private protocolVersion: string | undefined;
  private listening = false;
  /** Told when the GET stream is first answered (or cannot be): see `streamAnswered`. */
  private readonly streamWaiters: (() => void)[] = [];

  constructor(private readonly options: UpstreamOptions) {
    this.agent = new options.http.Agent({ keepAlive: true });
  }

  /** The version the server agreed to in its `initialize` answer, sent with every later request. */
  setProtocolVersion(version: string): void {
    this.protocolVersion = version;
  }

  /** The session the server gave this bridge, if it has given one. */
  get session(): string | undefined {
    return this.sessionId;
  }

  /**
   * Resolves once the GET stream that the next `notifications/initialized` opens has been answered,
   * or could not be, or after STREAM_WAIT_MS. The server drops what it sends unasked (a resource's
   * update) while a session has no GET stream, so the host's messages after `initialized` (a
   * subscription, then whatever changes it) wait for this: asked for when `initialized` is relayed,
   * before it is even sent.
   */
  streamAnswered(): Promise<void> {
    if (this.listening) return Promise.resolve();
    return new Promise((resolve) => {
      const timer = setTimeout(resolve, STREAM_WAIT_MS);
      this.streamWaiters.push(() => {
        clearTimeout(timer);
        resolve();
      });
    });
  }

  private answerStreamWaiters(): void {
    for (const waiter of this.streamWaiters.splice(0)) waiter();
  }

  /** Forgets a session the server no longer knows: the next `initialize` opens a new one. */
  forgetSession(): void {
    this.sessionId = undefined;
  }

  private headers(extra: Record<string, string>): OutgoingHttpHeaders {
    return {
      ...this.options.headers,
      ...(this.sessionId === undefined ? {} : { "mcp-session-id": this.sessionId }),
      ...(this.protocolVersion === undefined ? {} : { "mcp-protocol-version": this.protocolVersion }),
      ...extra,
    };
  }

  private request(method: string, headers: OutgoingHttpHeaders, body?: Buffer, timeoutMs?: number): Promise<IncomingMessage> {
    return new Promise((resolve, reject) => {
      const request = this.options.http.request(this.options.endpoint, { method, headers, agent: this.agent, signal: this.closing.signal }, resolve);
      request.once("error", reject);
      if (timeoutMs !== undefined) request.setTimeout(timeoutMs, () => request.destroy(new Error(`no answer to ${method} /mcp within ${timeoutMs} ms`)));
      request.end(body);
    });
  }

  /**
   * POSTs one message (or a batch) and relays the server's answers to it. Resolves once every
   * answer is relayed; rejects when the server could not be reached or refused the message.
   * `awaiting` tells whether an answer is still due: an event stream that ends before it, having
   * given its events ids, is resumed from the last one.
   */
  async post(message: unknown, awaiting: () => boolean = () => false): Promise<void> {
    try {
      await this.send(message, awaiting);
    } finally {
      // An `initialized` that opened no stream (refused, unreachable) leaves nobody waiting for one.
      if (!this.listening && isInitializedNotification(message)) this.answerStreamWaiters();
    }
  }

  private async send(message: unknown, awaiting: () => boolean): Promise<void> {
    const body = Buffer.from(JSON.stringify(message), "utf8");
    const response = await this.request("POST", this.headers({ "content-type": "application/json", accept: "application/json, text/event-stream", "content-length": String(body.length) }), body);
    const sessionId = response.headers["mcp-session-id"];
    if (typeof sessionId === "string" && sessionId !== "") this.sessionId = sessionId;
    const status = response.statusCode ?? 0;
    if (status < 200 || status > 299) throw await httpError(response, "POST /mcp", this.options.limit);
    const type = status === 202 ? "" : mediaType(response);
    if (type === "application/json") {
      for (const answer of parseMessages(await readBody(response, this.options.limit))) this.options.onMessage(answer);
    } else if (type === "text/event-stream") {
      await this.readAnswers(response, awaiting);
    } else {
      // Accepted (a notification or an answer to the server), or a 200 with nothing in it.
      await drain(response);
      if (type !== "") throw new Error(`the server answered POST /mcp with ${type}, neither JSON nor an event stream`);
      if (status === 202 && isInitializedNotification(message)) this.listen();
    }
  }

  /**
   * A call's event stream, and its continuation: a server that keeps its events may end the
   * stream before the answer (MCP's polling) or lose it, and the rest comes on a GET naming the
   * last event seen. Without ids there is nothing to resume, and what is unanswered stays so.
   */
  private async readAnswers(response: IncomingMessage, awaiting: () => boolean): Promise<void> {
    let lastEventId: string | undefined;
    let retryMs: number | undefined;
    for (let attempt = 0; ; attempt++) {
      let broken: Error | undefined;
      try {
        ({ lastEventId, retryMs } = await readEvents(response, this.options.limit, { onMessage: this.options.onMessage, say: this.options.say, lastEventId }));
      } catch (error) {
        broken = error instanceof Error ? error : new Error(String(error));
      }
      if (!awaiting() || lastEventId === undefined || attempt >= MAX_RESUMES || this.closing.signal.aborted) {
        if (broken !== undefined) throw broken;
        return;
      }
      await sleep(retryMs ?? FIRST_RETRY_MS, undefined, { signal: this.closing.signal });
      response = await this.request("GET", this.headers({ accept: "text/event-stream", "last-event-id": lastEventId }));
      if (response.statusCode !== 200) throw await httpError(response, "GET /mcp (resuming a call's stream)", this.options.limit);
    }
  }

  /**
   * The session's GET stream, for what the server sends unasked (notifications, its own requests).
   * A stream that ends or breaks is opened again after a delay (the server's `retry:` or a growing
   * backoff), naming the last event seen so a server that keeps them can resume; 405 (the server
   * has no such stream), 404 (the session is gone), 401 and 403 end it.
   */
  private listen(): void {
    if (this.listening) return;
    this.listening = true;
    void (async () => {
      let lastEventId: string | undefined;
      let retryMs: number | undefined;
      let failures = 0;
      let session = this.sessionId;
      while (!this.closing.signal.aborted) {
        // A new session (the old one was lost) has its own events: the old last id means nothing there.
        if (session !== this.sessionId) [session, lastEventId] = [this.sessionId, undefined];
        try {
          const response = await this.request("GET", this.headers({ accept: "text/event-stream", ...(lastEventId === undefined ? {} : { "last-event-id": lastEventId }) })).finally(() => this.answerStreamWaiters());
          if (response.statusCode === 405) return void (await drain(response));
          if (response.statusCode !== 200) {
            const error = await httpError(response, "GET /mcp", this.options.limit);
            // Gone or refused for good; anything else (409 while the server still holds the old stream, a 5xx) is tried again.
            if (FINAL_STATUSES.has(error.status)) return void this.options.say(`cairn mcp: the server's messages stop: ${error.message}`);
            throw error;
          }
          failures = 0;
          const ended = await readEvents(response, this.options.limit, { onMessage: this.options.onMessage, say: this.options.say, lastEventId });
          lastEventId = ended.lastEventId;
          retryMs = ended.retryMs ?? retryMs;
        } catch (error) {
          if (this.closing.signal.aborted) return;
          failures++;
          this.options.say(`cairn mcp: the server's message stream broke (${error instanceof Error ? error.message : String(error)}); reconnecting`);
        }
        // The server's `retry:` for a stream it ended; a growing backoff, never shorter, while it cannot be reached.
        const delay = failures === 0 ? (retryMs ?? FIRST_RETRY_MS) : Math.max(retryMs ?? 0, Math.min(FIRST_RETRY_MS * 1.5 ** failures, MAX_RETRY_MS));
        await sleep(delay, undefined, { signal: this.closing.signal }).catch(() => undefined);
      }
    })().finally(() => {
      // A new session's `notifications/initialized` opens the stream again.
      this.listening = false;
    });
  }

  /** Ends the session on the server (DELETE /mcp) rather than leaving it to idle out. */
  async end(): Promise<void> {
    if (this.sessionId === undefined || this.closing.signal.aborted) return;
    try {
      await drain(await this.request("DELETE", this.headers({}), undefined, END_WAIT_MS));
    } catch {
      // The server is gone or slow: its session idles out there.
    }
  }

  /** Cuts every request still open and stops the GET stream. */
  close(): void {
    this.closing.abort();
    this.agent.destroy();
  }
}
