import type { RE2JS } from "re2js";
import { KeywordScanner } from "./keywords.js";

/**
 * How redaction runs its rules, kept linear in the input. Every rule is an RE2 pattern (re2js: a
 * linear-time engine, so no pattern can backtrack), and every search is handed a bounded piece of
 * the text: a line, or a window of a long line. A search costs at most a constant times the piece it
 * is handed (re2js sizes its work to the piece, not to where the match is), so the total work is
 * bounded by (searches × piece length), and searches by (pieces + matches) per rule: linear in the
 * input for a fixed rule set. The meter counts exactly that sum, so a test can hold the bound.
 */

/**
 * A line longer than this is searched in overlapping windows of this many characters. Small on
 * purpose: up to about 1,400 characters re2js runs a pattern of our size on its bounded
 * backtracker, twenty times faster than on its NFA.
 */
const MAX_SEGMENT_CHARS = 1024;
/** How far windows overlap: a secret up to this long is whole in one of them, wherever it sits. */
const SEGMENT_OVERLAP_CHARS = 512;
/**
 * An unbroken run of token characters this long is redacted whole (`long_token`): longer than any
 * window's overlap, so no rule is sure to see all of it, and no prose or code looks like it. Only
 * a run that looks random is (LONG_TOKEN_MIN_ENTROPY bits per character: a base64 or hex secret
 * has 4 to 6, a run of one letter or a rule of dashes next to none).
 */
const LONG_TOKEN_CHARS = SEGMENT_OVERLAP_CHARS;
const LONG_TOKEN_MIN_ENTROPY = 3;

export interface SecretRule {
  /** Names the redaction: `[REDACTED:<kind>]`. */
  kind: string;
  pattern: RE2JS;
  /** Lower case; the rule searches only pieces holding one of them. Empty: every piece. */
  keywords: readonly string[];
  /** Capture groups that may hold the secret, the first that took part wins; none: the whole match. */
  groups: readonly number[];
  /** When candidates overlap, the lowest rank names the one redaction they become. */
  rank: number;
  /**
   * A last look at a found secret (a placeholder, a reference, too little entropy → false); `line`
   * is the piece searched, `rest` what follows the secret in it.
   */
  accept?: (secret: string, match: string, line: string, rest: string) => boolean;
}

/** A span of the text to replace. */
export interface Candidate {
  start: number;
  end: number;
  kind: string;
  rank: number;
}

/** Work done, in the engine's units: searches run, and the characters handed to them. */
export interface RedactionMeter {
  searches: number;
  chars: number;
}

/** What a redaction leaves in place of a secret, before its kind. */
export const MARKER = "[REDACTED:";

export const newMeter = (): RedactionMeter => ({ searches: 0, chars: 0 });

interface Segment {
  start: number;
  text: string;
}

/** The text as lines, and each long line as windows overlapping by SEGMENT_OVERLAP_CHARS. */
function segmentsOf(text: string): Segment[] {
  const segments: Segment[] = [];
  let lineStart = 0;
  while (lineStart <= text.length) {
    const newline = text.indexOf("\n", lineStart);
    const lineEnd = newline === -1 ? text.length : newline;
    if (lineEnd - lineStart <= MAX_SEGMENT_CHARS) {
      if (lineEnd > lineStart) segments.push({ start: lineStart, text: text.slice(lineStart, lineEnd) });
    } else {
      const step = MAX_SEGMENT_CHARS - SEGMENT_OVERLAP_CHARS;
      for (let at = lineStart; ; at += step) {
        const end = Math.min(at + MAX_SEGMENT_CHARS, lineEnd);
        segments.push({ start: at, text: text.slice(at, end) });
        if (end === lineEnd) break;
      }
    }
    lineStart = lineEnd + 1;
  }
  return segments;
}

/** A rule list's keywords in one scanner, for each keyword the rules (by index) it opens, and the rules that need none. */
interface KeywordIndex {
  scanner: KeywordScanner;
  rulesOf: number[][];
  always: number[];
}

/** Built once per rule list: gathering the keywords cost most of a short text's redaction. */
const keywordIndexes = new WeakMap<readonly SecretRule[], KeywordIndex>();

function keywordIndexOf(rules: readonly SecretRule[]): KeywordIndex {
  let index = keywordIndexes.get(rules);
  if (!index) {
    const keywords = [...new Set(rules.flatMap((rule) => rule.keywords))];
    const rulesOf = keywords.map((keyword) => rules.flatMap((rule, at) => (rule.keywords.includes(keyword) ? [at] : [])));
    const always = rules.flatMap((rule, at) => (rule.keywords.length === 0 ? [at] : []));
    index = { scanner: new KeywordScanner(keywords), rulesOf, always };
    keywordIndexes.set(rules, index);
  }
  return index;
}

/**
 * Every candidate the rules find in `text`. Each piece is scanned once for every rule's keywords;
 * a rule searches only the pieces that hold one of its own (or every piece, having none), in the
 * rules' order.
 */
export function findCandidates(text: string, rules: readonly SecretRule[], meter: RedactionMeter): Candidate[] {
  const { scanner, rulesOf, always } = keywordIndexOf(rules);
  const opened = new Uint8Array(rules.length);
  const candidates: Candidate[] = [];
  for (const segment of segmentsOf(text)) {
    const open = [...always];
    meter.chars += segment.text.length;
    scanner.scan(segment.text.toLowerCase(), (keyword) => {
      for (const rule of rulesOf[keyword] ?? []) {
        if (opened[rule] === 1) continue;
        opened[rule] = 1;
        open.push(rule);
      }
    });
    open.sort((a, b) => a - b);
    for (const at of open) {
      opened[at] = 0;
      search(segment, rules[at] as SecretRule, candidates, meter);
    }
  }
  return candidates;
}

function search(segment: Segment, rule: SecretRule, candidates: Candidate[], meter: RedactionMeter): void {
  const length = segment.text.length;
  meter.searches++;
  meter.chars += length;
  if (!rule.pattern.test(segment.text)) return;
  const matcher = rule.pattern.matcher(segment.text);
  for (;;) {
    meter.searches++;
    meter.chars += length;
    if (!matcher.find()) return;
    const group = rule.groups.find((index) => matcher.start(index) >= 0);
    const index = group ?? 0;
    const start = matcher.start(index);
    const end = matcher.end(index);
    const secret = segment.text.slice(start, end);
    // Text redacted before (a fact that quotes its capture) is not redacted again.
    if (end === start || secret.startsWith(MARKER)) continue;
    if (rule.accept) {
      // Its checks read at most the piece searched.
      meter.chars += length;
      if (!rule.accept(secret, matcher.group(0) ?? "", segment.text, segment.text.slice(end))) continue;
    }
    candidates.push({ start: segment.start + start, end: segment.start + end, kind: rule.kind, rank: rule.rank });
  }
}

const TOKEN_CHAR = /[A-Za-z0-9+/=_.-]/;

/** Shannon entropy in bits per character. */
export function entropy(text: string): number {
  const counts = new Map<string, number>();
  for (const char of text) counts.set(char, (counts.get(char) ?? 0) + 1);
  const length = [...text].length;
  let bits = 0;
  for (const count of counts.values()) {
    const share = count / length;
    bits -= share * Math.log2(share);
  }
  return bits;
}

/** Runs of at least LONG_TOKEN_CHARS token characters: one pass, each character looked at once. */
export function findLongTokens(text: string, rank: number, meter: RedactionMeter): Candidate[] {
  const found: Candidate[] = [];
  let runStart = 0;
  for (let at = 0; at <= text.length; at++) {
    if (at < text.length && TOKEN_CHAR.test(text[at] as string)) continue;
    if (at - runStart >= LONG_TOKEN_CHARS && entropy(text.slice(runStart, at)) >= LONG_TOKEN_MIN_ENTROPY) found.push({ start: runStart, end: at, kind: "long_token", rank });
    runStart = at + 1;
  }
  // Each character is looked at once, and once more if its run is long enough to weigh.
  meter.searches++;
  meter.chars += 2 * text.length;
  return found;
}

/**
 * The candidates as the redactions to make: overlapping ones become one (a token found by its
 * provider's rule and as an assignment's value is one secret), named by the lowest rank among them.
 */
export function mergeCandidates(candidates: Candidate[]): Candidate[] {
  const sorted = [...candidates].sort((a, b) => a.start - b.start || a.rank - b.rank || b.end - a.end);
  const merged: Candidate[] = [];
  for (const candidate of sorted) {
    const last = merged.at(-1);
    if (last && candidate.start < last.end) {
      if (candidate.rank < last.rank) {
        last.kind = candidate.kind;
        last.rank = candidate.rank;
      }
      last.end = Math.max(last.end, candidate.end);
      continue;
    }
    merged.push({ ...candidate });
  }
  return merged;
}
