import type { IncomingMessage } from "node:http";
import { parseMessages, type JsonRpcMessage } from "./bridge-messages.js";

export interface EventHandlers {
  onMessage: (message: JsonRpcMessage) => void;
  say: (line: string) => void;
  /** The last event id seen on an earlier stream, kept when this one names none. */
  lastEventId?: string | undefined;
}

export interface StreamEnd {
  lastEventId: string | undefined;
  /** The reconnection delay the server asked for (`retry:`), if it did. */
  retryMs: number | undefined;
}

/**
 * Relays the messages of a server-sent event stream, in order, until it ends. An event larger
 * than `limit` characters cuts the stream (a rejection) rather than being buffered without end.
 */
export async function readEvents(response: IncomingMessage, limit: number, handlers: EventHandlers): Promise<StreamEnd> {
  // Loaded with the first stream: the answer to `initialize` is JSON, so a bridge's start never waits for it.
  const { createParser } = await import("eventsource-parser");
  const end: StreamEnd = { lastEventId: handlers.lastEventId, retryMs: undefined };
  return new Promise((resolve, reject) => {
    const parser = createParser({
      maxBufferSize: limit,
      onEvent: (event) => {
        if (event.id !== undefined) end.lastEventId = event.id;
        // Events without data prime a stream for resumption or keep it alive; other event types are not MCP's.
        if (event.data === "" || (event.event !== undefined && event.event !== "message")) return;
        try {
          for (const message of parseMessages(event.data)) handlers.onMessage(message);
        } catch (error) {
          handlers.say(`cairn mcp: dropped an event of the server that is no JSON-RPC message (${error instanceof Error ? error.message : String(error)})`);
        }
      },
      onRetry: (ms) => {
        end.retryMs = ms;
      },
      onError: (error) => {
        if (error.type !== "max-buffer-size-exceeded") return;
        response.destroy();
        reject(new Error(`the server sent an event larger than the bridge's limit of ${limit} characters`));
      },
    });
    response.setEncoding("utf8");
    response.on("data", (chunk: string) => {
      if (!response.destroyed) parser.feed(chunk);
    });
    response.once("end", () => resolve(end));
    response.once("error", reject);
    response.once("close", () => (response.complete ? resolve(end) : reject(new Error("the server's stream was cut"))));
  });
}
