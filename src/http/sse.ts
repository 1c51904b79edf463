import type { Request, Response } from "express";
import type { StreamSource } from "../../tools/operation.js";

export interface SseOptions {
  /** Milliseconds between `: ping` comments (default 15 s). */
  pingMs: number;
}

/** Open streams, so shutdown can end them: an SSE connection never finishes on its own. */
export class StreamRegistry {
  private readonly open = new Set<() => void>();

  add(end: () => void): () => void {
    this.open.add(end);
    return () => this.open.delete(end);
  }

  get size(): number {
    return this.open.size;
  }

  endAll(): void {
    for (const end of [...this.open]) end();
  }
}

const BATCH = 100;

/**
 * Serves a stream source as server-sent events. Items are pulled only while the socket accepts
 * writes: a client that stops reading stops the pulling, its source's queue fills, the source
 * ends itself, and the connection is closed so the client reconnects and replays.
 */
export function serveEventStream(request: Request, response: Response, source: StreamSource, registry: StreamRegistry, options: SseOptions): void {
  response.status(200);
  response.set({
    "Content-Type": "text/event-stream; charset=utf-8",
    "Cache-Control": "no-cache, no-transform",
    Connection: "keep-alive",
    // Reverse proxies must not hold events back in a buffer.
    "X-Accel-Buffering": "no",
  });
  response.flushHeaders();
  request.socket.setNoDelay(true);

  let finished = false;
  let waitingForDrain = false;
  /** `cut`: the client fell behind; drop the connection rather than wait for it to read the rest. */
  const finish = (cut = false): void => {
    if (finished) return;
    finished = true;
    clearInterval(ping);
    unregister();
    source.end();
    // What the kernel already holds still reaches the client; an event cut in half is discarded by
    // SSE parsers, and the client resumes after the last whole one.
    if (cut) response.destroy();
    else response.end();
  };
  const unregister = registry.add(() => finish());
  const ping = setInterval(() => {
    if (!waitingForDrain) response.write(": ping\n\n");
  }, options.pingMs);
  ping.unref();

  let pumping = false;
  /** Sends what the source has ready, one batch at a time, until it is empty or the socket is full. */
  const pump = async (): Promise<void> => {
    if (finished || waitingForDrain || pumping) return;
    pumping = true;
    try {
      for (;;) {
        const items = await source.next(BATCH);
        if (finished || items.length === 0) return;
        let chunk = "";
        for (const item of items) chunk += `id: ${item.seq}\nevent: ${item.type}\ndata: ${JSON.stringify(item)}\n\n`;
        if (!response.write(chunk)) {
          waitingForDrain = true;
          response.once("drain", () => {
            waitingForDrain = false;
            void pull();
          });
          return;
        }
      }
    } finally {
      pumping = false;
    }
  };
  // A wake-up that arrives while a batch is being read must not be lost: pull again after it.
  let again = false;
  const pull = async (): Promise<void> => {
    if (pumping) {
      again = true;
      return;
    }
    do {
      again = false;
      await pump().catch(() => finish(true));
    } while (again && !finished);
  };

  source.onEnd((reason) => {
    // Overflow or a changed identity: close, so the client reconnects (and replays) or re-authenticates.
    if (!finished) setImmediate(() => finish(reason === "overflow"));
  });
  source.onReady(() => void pull());
  response.on("close", () => finish());
  // A stream client sends nothing after its request, so its half-close means it has gone; waiting
  // for a write to fail would keep it "online" until the next ping.
  const clientGone = (): void => finish();
  request.socket.once("end", clientGone);
  response.once("finish", () => request.socket.off("end", clientGone));

  response.write("retry: 3000\n\n");
  if (source.reset) response.write(`event: reset\ndata: ${JSON.stringify({ reason: "the requested event is older than retention" })}\n\n`);
  void pull();
}
