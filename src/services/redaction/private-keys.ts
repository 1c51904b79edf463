import type { Candidate, RedactionMeter } from "./engine.js";

/**
 * Private key blocks (PEM, OpenSSH, PGP), found by their armour lines rather than a pattern: a
 * block spans lines, and an excerpt may end inside one. Linear: the text is searched for BEGIN
 * lines once, and for END lines once more (each search starts where the last one's answer was).
 */

const BEGIN = "-----BEGIN ";
const END = "-----END ";
const DASHES = "-----";
/** The longest armour label looked at ("ENCRYPTED PRIVATE KEY", "PGP PRIVATE KEY BLOCK", …). */
const MAX_LABEL_CHARS = 64;
const BASE64 = /[A-Za-z0-9+/=]/;
const BODY_LINE = /^[A-Za-z0-9+/=]+$/;
/** An armour header inside a block ("Proc-Type: 4,ENCRYPTED", "Comment: …"). */
const HEADER = /^[A-Za-z][A-Za-z0-9-]{0,40}: /;

/** The label's closing dashes, if the label is short and on one line. */
function closingDashes(text: string, labelStart: number, meter: RedactionMeter): number {
  const window = text.slice(labelStart, labelStart + MAX_LABEL_CHARS + DASHES.length);
  meter.chars += window.length;
  const at = window.indexOf(DASHES);
  return at === -1 || window.slice(0, at).includes("\n") ? -1 : labelStart + at;
}

/**
 * Where the body of a block cut off before its END line stops: base64 and `\n` escapes on the
 * armour's own line (a key inside a JSON string), then whole lines of base64, armour headers or
 * blank lines. The first other line is the text after the key.
 */
function truncatedEnd(text: string, from: number, meter: RedactionMeter): number {
  let at = from;
  while (at < text.length) {
    const char = text[at] as string;
    if (BASE64.test(char)) at++;
    else if (char === "\\" && text[at + 1] === "n") at += 2;
    else break;
  }
  let end = at;
  while (text[at] === "\n" || (text[at] === "\r" && text[at + 1] === "\n")) {
    const lineStart = text.indexOf("\n", at) + 1;
    const newline = text.indexOf("\n", lineStart);
    const lineEnd = newline === -1 ? text.length : newline;
    const line = text.slice(lineStart, lineEnd).replace(/\r$/, "");
    meter.chars += line.length + 1;
    if (line !== "" && !BODY_LINE.test(line) && !HEADER.test(line)) break;
    at = lineEnd;
    if (line !== "") end = lineEnd;
  }
  meter.chars += end - from;
  return end;
}

export function findPrivateKeys(text: string, meter: RedactionMeter): Candidate[] {
  const found: Candidate[] = [];
  let from = 0;
  // The first END line at or after where it was last looked for; -1 once there is none.
  let nextEnd = -2;
  for (;;) {
    const begin = text.indexOf(BEGIN, from);
    if (begin === -1) break;
    const labelStart = begin + BEGIN.length;
    const labelEnd = closingDashes(text, labelStart, meter);
    if (labelEnd === -1 || !text.slice(labelStart, labelEnd).includes("PRIVATE KEY")) {
      from = labelStart;
      continue;
    }
    const bodyStart = labelEnd + DASHES.length;
    if (nextEnd !== -1 && nextEnd < bodyStart) {
      const at = text.indexOf(END, bodyStart);
      meter.chars += (at === -1 ? text.length : at) - bodyStart;
      nextEnd = at;
    }
    // Blocks do not nest: an END after the next BEGIN is that block's, and this one was cut off.
    const nextBegin = text.indexOf(BEGIN, bodyStart);
    meter.chars += (nextBegin === -1 ? text.length : nextBegin) - bodyStart;
    let end: number;
    if (nextEnd !== -1 && (nextBegin === -1 || nextEnd < nextBegin)) {
      const close = closingDashes(text, nextEnd + END.length, meter);
      end = close === -1 ? nextEnd + END.length : close + DASHES.length;
    } else {
      end = truncatedEnd(text, bodyStart, meter);
    }
    found.push({ start: begin, end, kind: "private_key", rank: 0 });
    from = end;
  }
  // The BEGIN lines: one scan of the text, from start to end.
  meter.searches++;
  meter.chars += text.length;
  return found;
}
