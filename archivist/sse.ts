import { setTimeout as sleep } from "node:timers/promises";
import { EventSourceParserStream } from "eventsource-parser/stream";
import type { Logger } from "../src/core/log.js";
import { backoffDelay, type Backoff } from "../src/core/retry.js";

export interface SseMessage {
  /** The last id the stream sent with an event, this one or an earlier one; null before any. */
  id: string | null;
  event: string;
  data: string;
}

/**
 * Reads one server-sent event stream until it ends, handing each complete event to `onEvent` and
 * waiting for it before reading on (so a slow handler slows the stream rather than piling events
 * up in memory; the server cuts a reader that falls too far behind, and the caller resumes).
 * Resolves when the server ends the stream; rejects on a refused request or a broken connection.
 */
export async function readEventStream(
  url: string,
  headers: Record<string, string>,
  signal: AbortSignal,
  onEvent: (message: SseMessage) => Promise<void> | void,
): Promise<void> {
  const response = await fetch(url, { headers: { accept: "text/event-stream", ...headers }, signal });
  if (!response.ok || !response.body) {
    await response.body?.cancel();
    throw new Error(`event stream refused: ${response.status}`);
  }
  const reader = response.body.pipeThrough(new TextDecoderStream()).pipeThrough(new EventSourceParserStream()).getReader();
  let id: string | null = null;
  try {
    for (;;) {
      const { done, value } = await reader.read();
      if (done) return;
      if (value.id !== undefined) id = value.id;
      await onEvent({ id, event: value.event ?? "message", data: value.data });
    }
  } finally {
    // Cancelling the end of the pipe cancels the response body too.
    await reader.cancel().catch(() => undefined);
  }
}

const RECONNECT: Backoff = { baseMs: 500, capMs: 30_000 };

export interface Follow {
  /** The stream's URL, its query naming the event types. */
  url: string;
  /** Request headers, `last-event-id` among them: asked again at each (re)connection. */
  headers: () => Record<string, string>;
  signal: AbortSignal;
  log: Logger;
  /** What the log calls the stream when it breaks. */
  what: string;
  /** Called with each event; a successful one resets the reconnection backoff when it returns true. */
  onEvent: (message: SseMessage) => Promise<boolean> | boolean;
}

/** Reads an event stream until `signal` aborts, reconnecting with backoff when it ends or breaks. */
export async function followEventStream(follow: Follow): Promise<void> {
  let failures = 0;
  while (!follow.signal.aborted) {
    try {
      await readEventStream(follow.url, follow.headers(), follow.signal, async (message) => {
        if (await follow.onEvent(message)) failures = 0;
      });
    } catch (error) {
      if (follow.signal.aborted) return;
      follow.log.warn(`${follow.what} interrupted`, { error });
    }
    if (follow.signal.aborted) return;
    failures++;
    await sleep(backoffDelay(RECONNECT, failures), undefined, { signal: follow.signal }).catch(() => undefined);
  }
}
