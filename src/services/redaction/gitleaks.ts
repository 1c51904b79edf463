import { RE2JS } from "re2js";
import { entropy, type SecretRule } from "./engine.js";
import { GITLEAKS } from "./gitleaks/rules.js";
import type { GitleaksAllowlist, GitleaksRule } from "./gitleaks/types.js";

/**
 * gitleaks' rule list (vendored, see gitleaks/README.md) as redaction rules: each provider's token
 * shape, with the list's own keywords, entropy floors and allowlists. Its patterns are Go RE2 and
 * run in re2js, the same engine and syntax, so none is rewritten.
 */

/**
 * The rules that open on gitleaks' assignment context (`[\w.-]{0,50}?` before a provider's name,
 * then `=`/`:` and a value): the caller rules' assignment names cover that family, and these cost
 * about ten times the rest, since they cannot start from a literal prefix.
 */
const ASSIGNMENT_CONTEXT = /^(?:\(\?i\))?\[\\w\.-\]\{0,50\}\?/;

/** Rules left to the caller rules or the private key scanner, which do what they do for text that is not a file. */
const LEFT_OUT = new Set([
  // Spans lines; private-keys.ts also takes a block cut off before its END line.
  "private-key",
  // Lazy `.*` across up to five lines; the caller rules find `-u user:password` and the Authorization header anywhere.
  "curl-auth-header",
  "curl-auth-user",
]);

export function adoptedGitleaksRules(): GitleaksRule[] {
  return GITLEAKS.rules.filter((rule) => rule.regex !== undefined && rule.path === undefined && !ASSIGNMENT_CONTEXT.test(rule.regex) && !LEFT_OUT.has(rule.id));
}

interface CompiledAllowlist {
  target: "secret" | "match" | "line";
  all: boolean;
  regexes: RE2JS[];
  stopwords: string[];
}

function compileAllowlist(list: GitleaksAllowlist): CompiledAllowlist | null {
  // A list that needs a path or a commit as well never holds for a capture; with OR its other checks still do.
  if (list.scoped && list.condition === "AND") return null;
  const target = list.regexTarget === "match" || list.regexTarget === "line" ? list.regexTarget : "secret";
  return { target, all: list.condition === "AND", regexes: list.regexes.map((source) => RE2JS.compile(source)), stopwords: list.stopwords.map((word) => word.toLowerCase()) };
}

function allows(list: CompiledAllowlist, secret: string, match: string, line: string): boolean {
  const subject = list.target === "secret" ? secret : list.target === "match" ? match : line;
  const lower = secret.toLowerCase();
  const checks: boolean[] = [];
  if (list.regexes.length > 0) checks.push(list.regexes.some((regex) => regex.test(subject)));
  if (list.stopwords.length > 0) checks.push(list.stopwords.some((word) => lower.includes(word)));
  return list.all ? checks.length > 0 && checks.every(Boolean) : checks.some(Boolean);
}

let globalAllowlist: CompiledAllowlist | null = null;
/** Compiled with the first rule, not when the module loads: a server's start does not wait for it. */
const theGlobalAllowlist = (): CompiledAllowlist =>
  (globalAllowlist ??= compileAllowlist({ regexes: GITLEAKS.allowlist.regexes, stopwords: GITLEAKS.allowlist.stopwords }) as CompiledAllowlist);

/** `slack-bot-token` → `slack_bot_token`: the kinds of a redaction are snake case, ours and gitleaks' alike. */
const kindOf = (id: string): string => id.replace(/-/g, "_");

function toSecretRule(rule: GitleaksRule & { regex: string }, rank: number): SecretRule {
  const pattern = RE2JS.compile(rule.regex);
  const groupCount = pattern.groupCount();
  const groups = rule.secretGroup !== undefined ? [rule.secretGroup] : Array.from({ length: groupCount }, (_, index) => index + 1);
  const lists = rule.allowlists.map(compileAllowlist).filter((list): list is CompiledAllowlist => list !== null);
  const floor = rule.entropy;
  const global = theGlobalAllowlist();
  return {
    kind: kindOf(rule.id),
    pattern,
    keywords: rule.keywords.map((keyword) => keyword.toLowerCase()),
    groups,
    rank,
    accept: (secret, match, line) =>
      (floor === undefined || entropy(secret) >= floor) &&
      !allows(global, secret, match, line) &&
      !lists.some((list) => allows(list, secret, match, line)),
  };
}

/** Each adopted rule as a function that compiles it, so the compiling can be spread over turns of the event loop. */
export function gitleaksRuleBuilders(rank: number): (() => SecretRule)[] {
  return adoptedGitleaksRules().map((rule) => () => toSecretRule(rule as GitleaksRule & { regex: string }, rank));
}
