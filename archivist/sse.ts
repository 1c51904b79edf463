import { EventSourceParserStream } from "eventsource-parser/stream";

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
