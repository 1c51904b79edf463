import { Readable } from "node:stream";

/**
 * A text read line by line, from its first line, as many times as asked: a request body kept in
 * a file (an import of any size), or a string. Reading it again must give the same lines, so work
 * over it may be run again (a transaction that collided with another is).
 */
export interface LineSource {
  /**
   * Every line in order, without its line break (`\n`, or `\r\n`); text after the last break is a
   * line, nothing after it is not.
   */
  lines(): AsyncIterable<string>;
}

export const isLineSource = (value: unknown): value is LineSource => typeof (value as LineSource | null)?.lines === "function";

const withoutCarriageReturn = (line: string): string => (line.endsWith("\r") ? line.slice(0, -1) : line);

/** The lines of a string held in memory (small bodies, tests). */
export function linesOfText(text: string): LineSource {
  return {
    lines() {
      const lines = text.split("\n");
      if (lines.at(-1) === "") lines.pop();
      return Readable.from(lines.map(withoutCarriageReturn), { objectMode: true }) as AsyncIterable<string>;
    },
  };
}

/** The lines of a stream of UTF-8 bytes, split as `linesOfText` splits a string; one line at a time in memory. */
export async function* splitLines(chunks: AsyncIterable<Uint8Array>): AsyncIterable<string> {
  const decoder = new TextDecoder("utf-8");
  let pending = "";
  for await (const chunk of chunks) {
    pending += decoder.decode(chunk, { stream: true });
    let start = 0;
    for (let end = pending.indexOf("\n"); end !== -1; end = pending.indexOf("\n", start)) {
      yield withoutCarriageReturn(pending.slice(start, end));
      start = end + 1;
    }
    pending = pending.slice(start);
  }
  pending += decoder.decode();
  if (pending !== "") yield withoutCarriageReturn(pending);
}
