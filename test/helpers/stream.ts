import http from "node:http";
import { EventSource } from "eventsource";
import { SERVER_EVENT_TYPES } from "../../src/wire/events.js";
import type { Credentials, TestServer } from "./server.js";
import { eventually } from "./wait.js";

/**
 * Every event type a stream test may see: EventSource dispatches named events only to listeners of
 * that name. The server's own come from the typed list, so none can be missing.
 */
const EVENT_TYPES = [...SERVER_EVENT_TYPES, "test.marker", "test.bulk", "test.sentinel", "archivist.synthesis"];

export interface StreamedEvent {
  seq: number;
  type: string;
  agent_id: string;
  project: string | null;
  payload: Record<string, unknown>;
  /** The SSE `id:` line, which must equal `seq`. */
  lastEventId: string;
}

export interface OpenStream {
  received: StreamedEvent[];
  resets: number;
  opened: Promise<void>;
  source: EventSource;
  close(): void;
}

/** A stream read with the `eventsource` client, authenticated by header, optionally resuming after `lastEventId`. */
export function openStream(server: Pick<TestServer, "url">, as: Credentials, options: { query?: string; lastEventId?: number } = {}): OpenStream {
  const source = new EventSource(`${server.url}/events/stream${options.query ?? ""}`, {
    fetch: (input, init) => {
      const headers = new Headers(init?.headers);
      headers.set("X-Agent-ID", as.agentId);
      headers.set("X-API-Key", as.apiKey);
      // The client sends its own Last-Event-ID when it reconnects; a fresh client resumes from ours.
      if (options.lastEventId !== undefined && !headers.has("Last-Event-ID")) headers.set("Last-Event-ID", String(options.lastEventId));
      return fetch(input, { ...init, headers });
    },
  });
  const stream: OpenStream = {
    received: [],
    resets: 0,
    source,
    opened: new Promise((resolve, reject) => {
      source.onopen = () => resolve();
      source.onerror = (error) => {
        if (source.readyState === EventSource.CLOSED) reject(new Error(`stream failed: ${error.message ?? "closed"}`));
      };
    }),
    close: () => source.close(),
  };
  for (const type of EVENT_TYPES) {
    source.addEventListener(type, (event) => {
      // A MessageEvent; this project's typings have no DOM library to name it.
      const message = event as unknown as { data: string; lastEventId: string };
      const data = JSON.parse(message.data) as Omit<StreamedEvent, "lastEventId">;
      stream.received.push({ ...data, lastEventId: message.lastEventId });
    });
  }
  source.addEventListener("reset", () => {
    stream.resets++;
  });
  return stream;
}

export interface Frame {
  id?: string;
  event?: string;
  data?: string;
  retry?: string;
  comment?: string;
}

/**
 * Server-sent event frames as a plain HTTP client reads them (for clients that read slowly or not
 * at all). A last frame without its blank line was cut off and is dropped, as SSE clients do.
 */
export function parseFrames(text: string): Frame[] {
  const blocks = text.split("\n\n");
  blocks.pop();
  return blocks
    .filter((block) => block.trim() !== "")
    .map((block) => {
      const frame: Frame = {};
      for (const line of block.split("\n")) {
        if (line.startsWith(":")) frame.comment = line.slice(1).trim();
        else {
          const colon = line.indexOf(":");
          const field = line.slice(0, colon);
          const value = line.slice(colon + 1).replace(/^ /, "");
          if (field === "id" || field === "event" || field === "data" || field === "retry") frame[field] = value;
        }
      }
      return frame;
    });
}

/** A stream response that nobody reads until `readAll()`: the server sees a client that has stopped. */
export function stalledStream(server: TestServer, as: Credentials): Promise<{ response: http.IncomingMessage; readAll(): Promise<string> }> {
  const url = new URL("/events/stream", server.url);
  return new Promise((resolve, reject) => {
    const request = http.get(url, { headers: { "X-Agent-ID": as.agentId, "X-API-Key": as.apiKey } }, (response) => {
      response.pause();
      resolve({
        response,
        // Everything until the connection closes, however it closes (a cut-off stream ends abruptly).
        readAll: () =>
          new Promise((done) => {
            const chunks: Buffer[] = [];
            response.on("data", (chunk: Buffer) => chunks.push(chunk));
            response.on("error", () => undefined);
            response.on("close", () => done(Buffer.concat(chunks).toString("utf8")));
            response.resume();
          }),
      });
    });
    request.on("error", reject);
  });
}

/**
 * The events `stream` delivered before the first one `isSentinel` picks, once that one has arrived.
 * A stream delivers in seq order, so an event emitted after the ones under test marks their end:
 * once it is in, what came before it is all the stream will ever deliver of them. That shows
 * nothing more arrives without sleeping for a guessed time.
 */
export async function receivedBefore(stream: OpenStream, isSentinel: (event: StreamedEvent) => boolean): Promise<StreamedEvent[]> {
  if (!(await eventually(() => stream.received.some(isSentinel)))) {
    throw new Error(`the sentinel never arrived (${stream.received.length} events did)`);
  }
  return stream.received.slice(0, stream.received.findIndex(isSentinel));
}

/** Emits a global `test.sentinel` event as `as` (every agent sees it) and returns how to recognise it. */
export async function emitSentinel(server: TestServer, as: Credentials): Promise<(event: StreamedEvent) => boolean> {
  const response = await server.request<{ seq: number }>("/events", { as, body: { type: "test.sentinel", payload: {}, project: null } });
  if (response.status !== 201) throw new Error(`the sentinel was refused: ${response.status} ${response.text}`);
  const { seq } = response.body;
  return (event) => event.seq === seq;
}
