/**
 * Secrets a capture may carry (CONTRACT §13), replaced by `[REDACTED:<kind>]` before anything is
 * stored. Captures are raw session text: a transcript holds whatever a tool printed, keys
 * included. Each pattern is anchored on what makes the secret recognisable (a prefix, a PEM
 * armour line, an assignment's name) so ordinary prose is left alone. Order matters: a PEM block
 * or a JWT is matched whole before a shorter pattern could take a piece of it, and `bearer`
 * comes before the token kinds it may wrap, so one secret is one redaction.
 */
export interface RedactionPattern {
  kind: string;
  pattern: RegExp;
  /** The capture group kept in front of the marker (an assignment's name and its `=`). */
  keepGroup?: number;
}

export const REDACTION_PATTERNS: readonly RedactionPattern[] = [
  // A whole block, or, cut off before its END line (an excerpt ends mid-key), all of its body.
  { kind: "private_key", pattern: /-----BEGIN ((?:[A-Z0-9]+ ){0,3})PRIVATE KEY-----(?:[\s\S]*?-----END \1PRIVATE KEY-----|[A-Za-z0-9+/=\s:-]*)/g },
  // header.payload.signature, each base64url; a JWT's header always starts with `{"` → `eyJ`.
  { kind: "jwt", pattern: /\beyJ[A-Za-z0-9_-]{5,}\.eyJ[A-Za-z0-9_-]{5,}\.[A-Za-z0-9_-]{10,}/g },
  { kind: "bearer", pattern: /\bBearer[ \t]+[A-Za-z0-9._~+/-]{16,}=*/gi },
  // Every secret Cairn issues: API keys, OAuth access tokens, UI sessions and sign-in links.
  { kind: "cairn_key", pattern: /\bcairn_(?:at_|ui_|login_)?[A-Za-z0-9_-]{24,}/g },
  { kind: "anthropic_key", pattern: /\bsk-ant-[A-Za-z0-9_-]{20,}/g },
  { kind: "openai_key", pattern: /\bsk-(?:proj-|svcacct-|admin-)?[A-Za-z0-9_-]{20,}/g },
  { kind: "aws_access_key", pattern: /\b(?:AKIA|ASIA|AGPA|AIDA|AROA|ANPA|ANVA|AIPA)[A-Z0-9]{16}\b/g },
  { kind: "github_token", pattern: /\b(?:gh[pousr]_[A-Za-z0-9]{36,}|github_pat_[A-Za-z0-9_]{22,})/g },
  {
    // `password = hunter2`, `API_KEY: "…"`, `--secret=…`, `client_secret=…` in a URL: the name
    // stays, the value goes (quoted values whole; unquoted ones up to white space or a separator).
    // At most four words before the name: an unbounded prefix would backtrack quadratically.
    kind: "assignment",
    pattern:
      /\b((?:[A-Za-z0-9]+[_-]){0,4}(?:password|passwd|secret|api[_-]?key|access[_-]?key|(?:access|refresh|auth|api|session)[_-]?token)\b["']?[ \t]*[:=][ \t]*)("[^"\n]*"|'[^'\n]*'|[^\s"'&,;]+)/gi,
    keepGroup: 1,
  },
];

export interface Redacted {
  text: string;
  /** Secrets replaced, all kinds together. */
  redactions: number;
}

/** `text` with every secret replaced by `[REDACTED:<kind>]`, and how many were. */
export function redactSecrets(text: string): Redacted {
  let redactions = 0;
  let current = text;
  for (const { kind, pattern, keepGroup } of REDACTION_PATTERNS) {
    current = current.replace(pattern, (whole: string, ...groups: unknown[]) => {
      const group = keepGroup === undefined ? undefined : groups[keepGroup - 1];
      const kept = typeof group === "string" ? group : "";
      // A value an earlier pattern already redacted (`secret=[REDACTED:jwt]`) is one secret, not two.
      if (whole.slice(kept.length).startsWith("[REDACTED:")) return whole;
      redactions++;
      return `${kept}[REDACTED:${kind}]`;
    });
  }
  return { text: current, redactions };
}
