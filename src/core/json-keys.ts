import type { FieldError } from "./errors.js";

// JSON.parse keeps the last of two equal keys (`{"content":"a","content":"b"}` is "b") and makes
// `__proto__` an own key that the next Object.assign turns into a prototype. A client that sends
// either means something the server would silently not do, so both are refused with their path.
// The check reads the text once, after JSON.parse has accepted it: one pass, no recursion.

const QUOTE = 0x22;
const BACKSLASH = 0x5c;
const OPEN_OBJECT = 0x7b;
const CLOSE_OBJECT = 0x7d;
const OPEN_ARRAY = 0x5b;
const CLOSE_ARRAY = 0x5d;
const COMMA = 0x2c;

/** A key that `Object.assign` and plain-object lookups treat as the prototype, never as data. */
const PROTOTYPE_KEY = "__proto__";

interface ObjectFrame {
  keys: Set<string>;
  /** The key being read's value, once read; the next string is a key while this is null. */
  key: string | null;
}

interface ArrayFrame {
  index: number;
}

type Frame = ObjectFrame | ArrayFrame;

const pathOf = (frames: readonly Frame[], last: string): string =>
  [...frames.slice(0, -1).map((frame) => ("keys" in frame ? (frame.key ?? "") : String(frame.index))), last].join(".");

/** Where the string starting at `start` (its opening quote) ends: the index of its closing quote. */
function stringEnd(text: string, start: number): number {
  let at = start + 1;
  for (;;) {
    const code = text.charCodeAt(at);
    if (code === QUOTE) return at;
    at += code === BACKSLASH ? 2 : 1;
  }
}

/** A refused key: where it is, and a sentence saying why. */
export interface KeyProblem {
  error: FieldError;
  detail: string;
}

/**
 * The first key of `text` (JSON that JSON.parse accepted) that an object holds twice, or that is
 * `__proto__`; null when there is none.
 */
export function keyProblem(text: string): KeyProblem | null {
  const frames: Frame[] = [];
  for (let at = 0; at < text.length; at++) {
    const code = text.charCodeAt(at);
    if (code === QUOTE) {
      const end = stringEnd(text, at);
      const top = frames[frames.length - 1];
      if (top && "keys" in top && top.key === null) {
        const raw = text.slice(at + 1, end);
        const key = raw.includes("\\") ? (JSON.parse(`"${raw}"`) as string) : raw;
        if (key === PROTOTYPE_KEY) return { error: { path: pathOf(frames, key), message: "__proto__ is not accepted as a key" }, detail: "json with a __proto__ key is refused" };
        if (top.keys.has(key)) return { error: { path: pathOf(frames, key), message: "duplicate key" }, detail: "json with a key twice in one object is refused" };
        top.keys.add(key);
        top.key = key;
      }
      at = end;
    } else if (code === OPEN_OBJECT) {
      frames.push({ keys: new Set(), key: null });
    } else if (code === OPEN_ARRAY) {
      frames.push({ index: 0 });
    } else if (code === CLOSE_OBJECT || code === CLOSE_ARRAY) {
      frames.pop();
    } else if (code === COMMA) {
      const top = frames[frames.length - 1];
      if (top && "keys" in top) top.key = null;
      else if (top) top.index += 1;
    }
  }
  return null;
}
