// A parser for the text/event-stream format (the WHATWG "event stream interpretation"), fed
// with decoded chunks as they arrive.

export interface SseMessage {
  event: string;
  data: string;
  id: string | undefined;
}

export class SseParser {
  private buffer = "";
  private dataLines: string[] = [];
  private eventName = "";
  private hasData = false;
  /** The last `id:` seen, kept across messages as the spec's "last event ID buffer". */
  lastEventId: string | undefined;
  /** The server's `retry:` advice in milliseconds. */
  retryMs: number | undefined;

  push(chunk: string): SseMessage[] {
    this.buffer += chunk;
    const messages: SseMessage[] = [];
    let start = 0;
    for (;;) {
      const newline = this.buffer.slice(start).search(/\r\n|\r|\n/);
      if (newline < 0) break;
      const end = start + newline;
      // A lone \r at the very end may be the first half of \r\n: wait for the next chunk.
      if (this.buffer[end] === "\r" && end + 1 === this.buffer.length) break;
      const width = this.buffer.startsWith("\r\n", end) ? 2 : 1;
      const message = this.line(this.buffer.slice(start, end));
      if (message) messages.push(message);
      start = end + width;
    }
    this.buffer = this.buffer.slice(start);
    return messages;
  }

  private line(line: string): SseMessage | undefined {
    if (line === "") return this.dispatch();
    if (line.startsWith(":")) return undefined;
    const colon = line.indexOf(":");
    const field = colon < 0 ? line : line.slice(0, colon);
    let value = colon < 0 ? "" : line.slice(colon + 1);
    if (value.startsWith(" ")) value = value.slice(1);
    switch (field) {
      case "event":
        this.eventName = value;
        break;
      case "data":
        this.dataLines.push(value);
        this.hasData = true;
        break;
      case "id":
        if (!value.includes("\0")) this.lastEventId = value;
        break;
      case "retry":
        if (/^\d+$/.test(value)) this.retryMs = Number(value);
        break;
      default:
        break;
    }
    return undefined;
  }

  private dispatch(): SseMessage | undefined {
    const message = this.hasData ? { event: this.eventName || "message", data: this.dataLines.join("\n"), id: this.lastEventId } : undefined;
    this.dataLines = [];
    this.eventName = "";
    this.hasData = false;
    return message;
  }
}
