import { setImmediate as nextTurn } from "node:timers/promises";
import { callerRuleBuilders, RANK } from "./redaction/caller-rules.js";
import { type Candidate, findCandidates, findLongTokens, MARKER, mergeCandidates, newMeter, type RedactionMeter, type SecretRule } from "./redaction/engine.js";
import { gitleaksRuleBuilders } from "./redaction/gitleaks.js";
import { findPrivateKeys } from "./redaction/private-keys.js";

export { newMeter, type RedactionMeter } from "./redaction/engine.js";

/**
 * Secrets replaced by `[REDACTED:<kind>]` before anything is stored: captures at ingest (CONTRACT
 * §13), every memory entry's content and tags (the facts the archivist writes from captures
 * included), a custom event's payload, and every line of the audit log (CONTRACT §1.1: no secret in
 * an event or the audit repo; docs/decisions.md, "Secrets in memory, events and the audit log").
 * Four sources, all linear (docs/decisions.md, "Redaction (issue 25)"): private key blocks by their
 * armour, gitleaks' rule list for each provider's token shapes, the caller rules for secrets known
 * by where they stand (URL passwords, command-line flags, assignment names), and any very long
 * opaque token.
 */

export interface Redacted {
  text: string;
  /** Secrets replaced, all kinds together. */
  redactions: number;
}

let rules: SecretRule[] | null = null;

/** Compiled on first use: a process that never redacts (the CLI's other commands) never pays for it. */
const allRules = (): SecretRule[] => (rules ??= [...gitleaksRuleBuilders(RANK.provider), ...callerRuleBuilders()].map((build) => build()));

/** How long one turn of the warm-up or of a long redaction may hold the event loop. */
const TURN_MS = 10;
/** Text redacted in one turn: beyond this, a redaction yields between pieces of about this size. */
const PIECE_CHARS = 16 * 1024;

let warming: Promise<void> | null = null;

/**
 * Compiles the rules and runs each once (the engine builds its automata lazily, and the first
 * searches cost several times the later ones), a few at a time between turns of the event loop:
 * about a quarter of a second of CPU that a server pays soon after it starts, never in one piece
 * and never in a request (one arriving before the warm-up ends compiles what is left).
 */
export function warmRedaction(): Promise<void> {
  warming ??= (async () => {
    const builders = [...gitleaksRuleBuilders(RANK.provider), ...callerRuleBuilders()];
    const compiled: SecretRule[] = [];
    // Each keyword as a name, a prefix and a quoted key, with a token-like value: most rules match.
    const value = "Xy7Qw3Er5Ty8Ui9Op0As2Df4Gh6Jk1Lz";
    let turn = performance.now();
    for (const build of builders) {
      if (rules) return;
      const rule = build();
      compiled.push(rule);
      const sample = rule.keywords.map((keyword) => `${keyword}=${value} ${keyword}${value} "${keyword}": "${value}"`).join("\n") || value;
      findCandidates(sample, [rule], newMeter());
      if (performance.now() - turn > TURN_MS) {
        await nextTurn();
        turn = performance.now();
      }
    }
    rules ??= compiled;
    // The keyword table of the whole rule set, built here rather than in the first request.
    findCandidates("", rules, newMeter());
  })();
  return warming;
}

/** Where `text` already holds a redaction's marker: nothing found there is redacted again. */
function markers(text: string, meter: RedactionMeter): { start: number; end: number }[] {
  const spans: { start: number; end: number }[] = [];
  let at = text.indexOf(MARKER);
  while (at !== -1) {
    const close = text.indexOf("]", at);
    if (close === -1) break;
    spans.push({ start: at, end: close + 1 });
    at = text.indexOf(MARKER, close + 1);
  }
  meter.chars += text.length;
  return spans;
}

/** The candidates that touch no marker (both lists sorted by start). */
function outsideMarkers(candidates: Candidate[], spans: { start: number; end: number }[]): Candidate[] {
  if (spans.length === 0) return candidates;
  let next = 0;
  return candidates.filter((candidate) => {
    while (next < spans.length && (spans[next] as { end: number }).end <= candidate.start) next++;
    const span = spans[next];
    return span === undefined || span.start >= candidate.end;
  });
}

/** `text` with every secret replaced by `[REDACTED:<kind>]`, and how many were; `meter` adds up the work. */
export function redactSecrets(text: string, meter: RedactionMeter = newMeter()): Redacted {
  const candidates = [...findPrivateKeys(text, meter), ...findCandidates(text, allRules(), meter), ...findLongTokens(text, RANK.longToken, meter)];
  return replaceFound(text, candidates, meter);
}

/**
 * The same, for text a request brings: beyond PIECE_CHARS the rules run piece by piece (whole
 * lines: no rule matches across a line end, and key blocks, which do, are found over the whole
 * text first), with a turn of the event loop between pieces, so a long capture never holds the
 * server for longer than one piece takes.
 */
export async function redactSecretsInTurns(text: string, meter: RedactionMeter = newMeter()): Promise<Redacted> {
  if (text.length <= PIECE_CHARS) return redactSecrets(text, meter);
  const rules = allRules();
  const candidates = findPrivateKeys(text, meter);
  for (let start = 0; start < text.length; ) {
    const newline = text.indexOf("\n", start + PIECE_CHARS);
    const end = newline === -1 ? text.length : newline + 1;
    const piece = text.slice(start, end);
    for (const found of [...findCandidates(piece, rules, meter), ...findLongTokens(piece, RANK.longToken, meter)]) {
      candidates.push({ ...found, start: found.start + start, end: found.end + start });
    }
    start = end;
    if (start < text.length) await nextTurn();
  }
  return replaceFound(text, candidates, meter);
}

function replaceFound(text: string, candidates: Candidate[], meter: RedactionMeter): Redacted {
  const found = mergeCandidates(outsideMarkers(candidates.sort((a, b) => a.start - b.start), markers(text, meter)));
  if (found.length === 0) return { text, redactions: 0 };
  const parts: string[] = [];
  let at = 0;
  for (const { start, end, kind } of found) {
    parts.push(text.slice(at, start), `[REDACTED:${kind}]`);
    at = end;
  }
  parts.push(text.slice(at));
  return { text: parts.join(""), redactions: found.length };
}

/** A JSON value (parsed) with each string in it redacted, keys left as they are; a long string is redacted in turns, as a request's text is. */
export async function redactJson(value: unknown): Promise<unknown> {
  if (typeof value === "string") return (await redactSecretsInTurns(value)).text;
  if (Array.isArray(value)) {
    const items: unknown[] = [];
    for (const item of value) items.push(await redactJson(item));
    return items;
  }
  if (value === null || typeof value !== "object") return value;
  const entries: [string, unknown][] = [];
  for (const [key, item] of Object.entries(value)) entries.push([key, await redactJson(item)]);
  return Object.fromEntries(entries);
}
