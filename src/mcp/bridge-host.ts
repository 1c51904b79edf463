import type { Readable, Writable } from "node:stream";
import type { JsonRpcMessage } from "./bridge-messages.js";

export interface LineHandlers {
  onLine: (line: string) => void;
  /** A line longer than the limit: its bytes were dropped as they came, up to its newline. */
  onOversize: () => void;
  onEnd: () => void;
}

/**
 * The host's side of MCP's stdio transport: one message per line. A line is held only up to
 * `limit` bytes; past that it is dropped as it arrives, so a host that never sends a newline
 * cannot make the bridge buffer without end.
 */
export function readLines(input: Readable, limit: number, handlers: LineHandlers): void {
  let parts: Buffer[] = [];
  let size = 0;
  let dropping = false;
  const finish = (): void => {
    if (!dropping && size > 0) {
      const line = Buffer.concat(parts, size).toString("utf8").replace(/\r$/, "");
      if (line.trim() !== "") handlers.onLine(line);
    }
    parts = [];
    size = 0;
    dropping = false;
  };
  input.on("data", (chunk: Buffer) => {
    for (let start = 0; ; ) {
      const newline = chunk.indexOf(10, start);
      const piece = chunk.subarray(start, newline === -1 ? chunk.length : newline);
      if (!dropping && size + piece.length > limit) {
        dropping = true;
        parts = [];
        size = 0;
        handlers.onOversize();
      } else if (!dropping && piece.length > 0) {
        parts.push(piece);
        size += piece.length;
      }
      if (newline === -1) return;
      finish();
      start = newline + 1;
    }
  });
  let ended = false;
  const end = (): void => {
    if (ended) return;
    ended = true;
    // A last line without its newline is still the host's message.
    finish();
    handlers.onEnd();
  };
  input.once("end", end);
  input.once("close", end);
  input.once("error", end);
}

/** Writes messages to the host, one per line, in the order given; stdout carries nothing else. */
export class HostWriter {
  private broken = false;

  constructor(private readonly output: Writable) {
    // A host that went away closes the pipe: what is still to be written has no reader.
    output.on("error", () => {
      this.broken = true;
    });
  }

  send(message: JsonRpcMessage): void {
    if (!this.broken) this.output.write(`${JSON.stringify(message)}\n`);
  }

  /** Resolves once everything written so far has been handed to the OS. */
  flushed(): Promise<void> {
    return this.broken ? Promise.resolve() : new Promise((resolve) => this.output.write("", () => resolve()));
  }
}
