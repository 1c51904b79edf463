// One connection to /events/stream for the whole UI. It is read with fetch rather than
// EventSource because EventSource dispatches named events only to listeners registered for each
// name (custom event types are open-ended) and cannot tell a 401 from a dropped connection.
// Like EventSource it reconnects on its own and resumes with Last-Event-ID, so nothing is missed.

import { createParser } from "eventsource-parser";
import { notifySessionEnded } from "./api.js";
import type { EventRecord } from "../../src/wire/events.js";

/** An event, or `reset`: the server could not resume, so whatever is shown should be fetched again. */
type LiveSignal = { kind: "event"; event: EventRecord } | { kind: "reset" };
export type LiveStatus = "connecting" | "live" | "reconnecting" | "stopped";

type SignalListener = (signal: LiveSignal) => void;
type StatusListener = (status: LiveStatus) => void;

const DEFAULT_RETRY_MS = 3000;
const MAX_RETRY_MS = 30_000;

class LiveStream {
  private readonly signalListeners = new Set<SignalListener>();
  private readonly statusListeners = new Set<StatusListener>();
  private controller: AbortController | null = null;
  private lastEventId: string | undefined;
  private retryMs = DEFAULT_RETRY_MS;
  private failures = 0;
  status: LiveStatus = "stopped";

  constructor(private readonly url = "/events/stream") {}

  start(): void {
    if (this.controller) return;
    const controller = new AbortController();
    this.controller = controller;
    this.lastEventId = undefined;
    this.setStatus("connecting");
    void this.run(controller.signal);
  }

  stop(): void {
    this.controller?.abort();
    this.controller = null;
    this.setStatus("stopped");
  }

  subscribe(listener: SignalListener): () => void {
    this.signalListeners.add(listener);
    return () => this.signalListeners.delete(listener);
  }

  onStatus(listener: StatusListener): () => void {
    this.statusListeners.add(listener);
    return () => this.statusListeners.delete(listener);
  }

  private setStatus(status: LiveStatus): void {
    if (status === this.status) return;
    this.status = status;
    for (const listener of this.statusListeners) listener(status);
  }

  private emit(signal: LiveSignal): void {
    for (const listener of this.signalListeners) listener(signal);
  }

  private async run(signal: AbortSignal): Promise<void> {
    while (!signal.aborted) {
      let waitMs = this.retryMs;
      try {
        const headers: Record<string, string> = { accept: "text/event-stream" };
        if (this.lastEventId !== undefined) headers["last-event-id"] = this.lastEventId;
        const response = await fetch(this.url, { credentials: "same-origin", headers, signal, cache: "no-store" });
        if (response.status === 401) {
          notifySessionEnded();
          this.stop();
          return;
        }
        if (!response.ok || !response.body) {
          const retryAfter = Number(response.headers.get("retry-after"));
          if (Number.isFinite(retryAfter) && retryAfter > 0) waitMs = retryAfter * 1000;
          throw new Error(`stream answered ${response.status}`);
        }
        await this.read(response.body, signal);
      } catch {
        // Dropped, refused or unreachable: reconnect below, backing off while it keeps failing.
      }
      if (signal.aborted) return;
      this.failures += 1;
      this.setStatus("reconnecting");
      const backoff = Math.min(MAX_RETRY_MS, waitMs * Math.max(1, 2 ** Math.min(this.failures - 1, 3)));
      await sleep(backoff, signal);
    }
  }

  private async read(body: ReadableStream<Uint8Array>, signal: AbortSignal): Promise<void> {
    const parser = createParser({
      onEvent: (message) => {
        if (message.id !== undefined) this.lastEventId = message.id;
        this.dispatch(message.event ?? "message", message.data);
      },
      onRetry: (ms) => {
        this.retryMs = ms;
      },
    });
    const decoder = new TextDecoder();
    const reader = body.getReader();
    this.failures = 0;
    this.setStatus("live");
    // Without a resume point, whatever happened before the stream opened was not seen.
    if (this.lastEventId === undefined) this.emit({ kind: "reset" });
    try {
      for (;;) {
        const { value, done } = await reader.read();
        if (done || signal.aborted) return;
        parser.feed(decoder.decode(value, { stream: true }));
      }
    } finally {
      reader.releaseLock();
    }
  }

  private dispatch(name: string, data: string): void {
    if (name === "reset") {
      this.emit({ kind: "reset" });
      return;
    }
    try {
      const event = JSON.parse(data) as EventRecord;
      if (typeof event.type === "string") this.emit({ kind: "event", event });
    } catch {
      // Not an event record: nothing to show.
    }
  }
}

function sleep(ms: number, signal: AbortSignal): Promise<void> {
  return new Promise((resolve) => {
    const timer = setTimeout(resolve, ms);
    signal.addEventListener("abort", () => {
      clearTimeout(timer);
      resolve();
    });
  });
}

export const liveStream = new LiveStream();

/** Whether an event type is in one of the families or types given (`task.*`, `memory.written`). */
export function typeMatches(type: string, patterns: readonly string[]): boolean {
  return patterns.some((pattern) => (pattern.endsWith(".*") ? type.startsWith(pattern.slice(0, -1)) : type === pattern));
}
