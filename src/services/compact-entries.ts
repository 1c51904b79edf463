import type { CompactHit, MemoryEntry } from "../wire/memory.js";
import { keywordTerms } from "./keyword-terms.js";

// The compact form of a memory entry (issue 26): what a model needs to decide whether to read
// the whole entry — its id, type, score, age, a headline and a few words around what matched.
// MCP answers with it unless the call asks for `verbose`; REST on request (`compact=true`).

const HEADLINE_CHARS = 64;
const SNIPPET_CHARS = 84;
/** How much of the text before the match a snippet keeps, so the match is read in its sentence. */
const LEAD_CHARS = 24;
const ELLIPSIS = "…";

const oneLine = (text: string): string => text.replace(/\s+/g, " ").trim();

/** At most `max` characters of `text`, cut at a word boundary where there is one near the end. */
function cut(text: string, max: number): string {
  const points = [...text];
  if (points.length <= max) return text;
  const head = points.slice(0, max - 1).join("");
  const space = head.lastIndexOf(" ");
  return (space > max / 2 ? head.slice(0, space) : head).trimEnd() + ELLIPSIS;
}

/** How long ago `iso` was, in the largest unit that fits: `now`, `5m`, `3h`, `2d`, `6w`, `4mo`, `2y`. */
export function ageOf(iso: string, nowMs: number): string {
  const seconds = Math.max(0, (nowMs - Date.parse(iso)) / 1000);
  const units: [number, string][] = [
    [365 * 86_400, "y"],
    [30 * 86_400, "mo"],
    [7 * 86_400, "w"],
    [86_400, "d"],
    [3_600, "h"],
    [60, "m"],
  ];
  for (const [size, unit] of units) if (seconds >= size) return `${Math.floor(seconds / size)}${unit}`;
  return "now";
}

/** Where in `text` (lower-cased) the first of `words` starts, a word's stem being enough ("crash" finds "crashes"). */
function matchAt(text: string, words: readonly string[]): number {
  const lower = text.toLowerCase();
  let best = -1;
  for (const word of words) {
    const stem = word.length > 5 ? word.slice(0, word.length - 2) : word;
    const at = lower.indexOf(stem);
    if (at >= 0 && (best < 0 || at < best)) best = at;
  }
  return best;
}

/**
 * A window of `text` around the first query word it holds past `shown` (what the headline already
 * shows of it), or from `shown` when it holds none; null when nothing is left to show.
 */
function snippetOf(text: string, words: readonly string[], shown: number): string | null {
  const tail = text.slice(shown).trimStart();
  if (tail === "") return null;
  const at = Math.max(0, matchAt(tail, words));
  if (at <= LEAD_CHARS) return (shown > 0 ? ELLIPSIS : "") + cut(tail, SNIPPET_CHARS - (shown > 0 ? 1 : 0));
  const from = tail.lastIndexOf(" ", at - LEAD_CHARS) + 1;
  return ELLIPSIS + cut(tail.slice(from), SNIPPET_CHARS - 1);
}

const firstLineOf = (content: string): string => oneLine(content.trim().split("\n")[0] ?? "");
const hasHeadline = (entry: Pick<MemoryEntry, "headline">): entry is { headline: string } => entry.headline !== null && entry.headline.trim() !== "";

/** The entry's headline, or else its first line, on one line and at most `max` characters (cut at a word, with an ellipsis). */
export const headlineOf = (entry: Pick<MemoryEntry, "headline" | "content">, max: number): string =>
  cut(hasHeadline(entry) ? oneLine(entry.headline) : firstLineOf(entry.content), max);

/** The compact form of `entry` found by query `q` (no query: the snippet is the text's start). */
export function compactEntry(entry: Pick<MemoryEntry, "id" | "type" | "headline" | "content" | "updated_at">, q: string, score: number | null, nowMs: number): CompactHit {
  const content = oneLine(entry.content);
  const firstLine = firstLineOf(entry.content);
  const titled = hasHeadline(entry);
  const headline = headlineOf(entry, HEADLINE_CHARS);
  // What the headline shows of the content is not repeated: without a headline of its own, the
  // snippet starts where the first line, as shown, stops.
  const shown = titled ? 0 : headline === firstLine ? firstLine.length : headline.length - ELLIPSIS.length;
  const snippet = snippetOf(content, keywordTerms(q), Math.min(shown, content.length));
  return {
    id: entry.id,
    type: entry.type,
    ...(score === null ? {} : { score }),
    age: ageOf(entry.updated_at, nowMs),
    headline,
    ...(snippet === null ? {} : { snippet }),
  };
}
