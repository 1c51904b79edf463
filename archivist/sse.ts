export interface SseMessage {
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
  const decoder = new TextDecoder();
  let buffer = "";
  let id: string | null = null;
  let event = "";
  let data: string[] = [];
  // Without DOM typings the stream's chunk type is unknown to the compiler; fetch yields bytes.
  const reader = response.body.getReader();
  try {
    for (;;) {
      const { done, value } = (await reader.read()) as { done: boolean; value?: Uint8Array };
      if (done) return;
      buffer += decoder.decode(value, { stream: true });
      let newline: number;
      while ((newline = buffer.search(/\r\n|\r|\n/)) !== -1) {
        // A lone CR at the end may be the first half of a CRLF split across chunks.
        if (newline === buffer.length - 1 && buffer.endsWith("\r")) break;
        const line = buffer.slice(0, newline);
        buffer = buffer.slice(newline + (buffer.startsWith("\r\n", newline) ? 2 : 1));
        if (line === "") {
          if (data.length > 0 || event !== "") await onEvent({ id, event: event || "message", data: data.join("\n") });
          event = "";
          data = [];
          continue;
        }
        if (line.startsWith(":")) continue;
        const colon = line.indexOf(":");
        const field = colon === -1 ? line : line.slice(0, colon);
        const fieldValue = colon === -1 ? "" : line.slice(colon + 1).replace(/^ /, "");
        if (field === "id") id = fieldValue;
        else if (field === "event") event = fieldValue;
        else if (field === "data") data.push(fieldValue);
      }
    }
  } finally {
    reader.releaseLock();
    await response.body.cancel().catch(() => undefined);
  }
}
