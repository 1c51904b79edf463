import { RE2JS } from "re2js";
import type { SecretRule } from "./engine.js";

/**
 * What secret-detection rule sets leave to the caller: secrets known by where they stand rather
 * than by their shape. A password after `user:` in a URL, after `-p` on a mysql command line,
 * after a name such as `PGPASSWORD=` or `"clientSecret":`. The name stays and the value goes, so a
 * digest still knows a secret was set. Patterns are RE2 syntax, run by the same linear engine.
 */

/** A value: single- or double-quoted (whole), or bare (up to white space or a separator). */
const VALUE = String.raw`(?:'([^'\n]+)'|"([^"\n]+)"|([^\s'"\x60,;&<>)}\]]+))`;
const VALUE_GROUPS = [1, 2, 3];

/**
 * The words that make a name a secret's, at its end: `PGPASSWORD`, `DB_PASS`, `MYSQL_PWD`,
 * `SECRET_KEY_BASE`, `clientSecret`, `X-API-Key`. `pwd` and `pass` need something before them
 * (`PWD` is the working directory), and `_base` may follow (Rails' `SECRET_KEY_BASE`). What comes
 * before the word is not matched: any name may end so, and a pattern that opened on the name's
 * first character would keep a thread alive for every character of every identifier.
 */
const SECRET_NAME = String.raw`(?:passw(?:or)?d|passphrase|secret|token|api[_.-]?key|apikey|(?:access|account|private|secret|encryption|signing|master|app|session|client|auth)[_.-]?key|[a-z0-9][_.-]?(?:pwd|pass))(?:[_.-]?base)?`;

/** Values that stand for a secret without being one: placeholders, references, types, empties. */
const NOT_A_VALUE =
  /^(?:null|nil|none|true|false|undefined|yes|no|on|off|string|str|number|int|integer|float|bool|boolean|bytes|any|unknown|object|required|optional|redacted|password|passwd|secret|token|your[_-].*|typeof|await|new|this|self|function|async|void|\*+|x+|\.+)$|…|\.\.\.$/i;
/** A manual page's markup: `\fIstring\fR`, `blank\&.`, `isn\*(Aqt`. */
const TROFF = /\\(?:&|\*\(|f[BIRP(])/;
/**
 * Bare words that follow a flag's or a secret's name in a sentence, not as its value: "--passphrase
 * with --quick-gen-key", "the --password option", "login and password management".
 */
const PROSE_WORD =
  /^(?:a|an|and|are|as|at|be|by|can|does|for|from|has|have|if|in|is|it|may|must|not|of|on|only|or|should|that|the|this|to|was|were|when|which|will|with|without|option|options|flag|argument|arguments|parameter|prompt|prompts|field|fields|policy|manager|management|hash|hashes|file|files|reset|length|entry|dialog|protected|based|support)$/i;
/** A reference to a secret kept elsewhere: `$VAR`, `${VAR}`, `{{ var }}`, `{env:VAR}`, `%VAR%`, `<token>`, or the variable's own name. */
const REFERENCE = /^(?:\$|\{|%[A-Za-z(]|<|#\{|@\{)|^[A-Z][A-Z0-9_]*_(?:KEY|TOKEN|SECRET|PASSWORD|PASS|PWD)$/;
/** A bare value that is code: `config.apiKey`, `caller?.role`, `process.env.TOKEN`, `getPassword(`. */
const CODE = /^[A-Za-z_$][\w$]*(?:\??\.[A-Za-z_$][\w$]*)+$|\(/;
const IDENTIFIER = /^[A-Za-z_$][\w$]*$/;
/** A bare value cut at a quote that opens a call's or a subscript's argument: `os.environ['KEY']`, `getenv("KEY")`, `ENV.fetch("KEY")`. */
const LOOKUP = /^[A-Za-z_$][\w$.]*[([]$/;

/** A word that stands for a value without being one: a placeholder, a reference, manual-page markup. */
const standsIn = (word: string): boolean => NOT_A_VALUE.test(word) || REFERENCE.test(word) || TROFF.test(word);

/**
 * `spaced`: white space stood before the value, as in code (`key = config.key`; a `.env` line has
 * none). `operator`: code went on after it (`token: current ? …`, `apiKey: generated,`).
 */
function isValue(value: string, quoted: boolean, spaced = true, operator = false): boolean {
  if (standsIn(value)) return false;
  if (quoted) return true;
  if (LOOKUP.test(value) || PROSE_WORD.test(value.replace(/[.,;:!?)]+$/, ""))) return false;
  return value.length >= 3 && !(spaced && (CODE.test(value) || (operator && IDENTIFIER.test(value))));
}

/**
 * A bare word of lower-case letters (the first may be a capital) after `name:` or `name = ` that a
 * sentence goes on from: "userauth_password: fix a crash on …", "signing-key: Added key from …".
 * A shell's `DB_PASSWORD=sunshine npm start` keeps its value (nothing spaced after its `=`).
 */
function continuesAsProse(secret: string, match: string, rest: string): boolean {
  if (!/^[A-Za-z][a-z]{0,19}$/.test(secret) || !/^[ \t]+[a-z]/.test(rest)) return false;
  const before = match.slice(0, match.lastIndexOf(secret));
  return /:[ \t]+$/.test(before) || /=[ \t]+$/.test(before);
}

/** The value VALUE found in `match`: quoted or not, spaced or not, and what followed it. */
function acceptValue(secret: string, match: string): boolean {
  const at = match.lastIndexOf(secret);
  const quote = match[at - 1];
  const quoted = (quote === "'" || quote === '"') && match[at + secret.length] === quote;
  const before = match[at - (quoted ? 2 : 1)];
  const after = match.slice(at + secret.length + (quoted ? 1 : 0)).trim();
  return isValue(secret, quoted, before === " " || before === "\t", after !== "");
}

/** A match whose value was quoted ends on its closing quote, or on sentence punctuation after it. */
const QUOTED_AT_END = /['"\x60][.,;:?)]*$/;

/**
 * Not a chosen word: a URL's rest ("a strong password on http://…" splits at its colon), a manual
 * page's markup ("blank\&.", "\fBlocked\fR"), a word or a constant's name in capitals
 * ("EAGAIN", "GNUTLS_E_DECRYPTION_FAILED", "CTRL^U").
 */
const NOT_PROSE = /^\/\/|:\/\/|^[A-Z]+$|^[A-Z][A-Z0-9]*(?:[_^][A-Z0-9]+)+$/;

/**
 * A bare word in prose that is a password, not a description of one: a run of digits (a PIN), or
 * six characters or more with a letter and a digit, a symbol other than a hyphen, or a capital
 * after the first character ("hunter22", "Fake-Pw!", "correctHorse"); never a placeholder.
 */
function looksChosen(word: string): boolean {
  if (standsIn(word) || NOT_PROSE.test(word)) return false;
  if (/^\d{4,}$/.test(word)) return true;
  if (word.length < 6 || !/[A-Za-z]/.test(word)) return false;
  return /\d/.test(word) || /[^A-Za-z0-9-]/.test(word) || /[A-Z]/.test(word.slice(1));
}

/**
 * The second word of a pair that is not a password: a file ("secrets.yaml"), a path or URL, a
 * host or a name in lower-case parts ("db-02", "prod-eu-1"), a time or a version, a package or an
 * action at its version ("checkout@v4").
 */
const NOT_A_PAIRED_PASSWORD = /^[\w-]+\.[A-Za-z][A-Za-z0-9]{0,4}$|[/\\]|^[a-z]+(?:[-.][a-z0-9]+)+$|^v?\d+(?:[.:]\d+)+|@(?:v\d+(?:\.\d+)*|\d+\.\d+\.\d+)$/;

/** What links a name to its value in a sentence: "is", "was now", "will be set to", "changed to". */
const PROSE_VERB = String.raw`(?:(?:is|was|will[ \t]+be)(?:[ \t]+(?:now|still|currently))?(?:[ \t]+(?:set|changed|reset)[ \t]+to)?|(?:set|changed|reset)[ \t]+to)`;
/** A value in a sentence: quoted whole, or one word with the sentence's punctuation left outside it. */
const PROSE_VALUE = String.raw`(?:'([^'\n]+)'|"([^"\n]+)"|\x60([^\x60\n]+)\x60|([^\s'"\x60]+?))[.,;:?)]*(?:\s|$)`;
const PROSE_GROUPS = [1, 2, 3, 4];

/** A value as a generator writes a key or token: 16 characters or more of a token's alphabet, letters and digits both. */
function looksGenerated(value: string): boolean {
  if (standsIn(value) || CODE.test(value)) return false;
  return value.length >= 16 && /^[A-Za-z0-9._~+/=-]+$/.test(value) && /[A-Za-z]/.test(value) && /\d/.test(value);
}

interface RuleSource extends Omit<SecretRule, "pattern"> {
  /** RE2 syntax. */
  pattern: string;
}

/** Ranks: a provider's token names a redaction before a password by place, and that before an assignment. */
export const RANK = { privateKey: 0, provider: 1, place: 2, assignment: 3, longToken: 4 } as const;

const SOURCES: RuleSource[] = [
  // `scheme://user:password@host` for any scheme; the user stays.
  {
    kind: "url_password",
    pattern: String.raw`://[^\s:/?#@"'<>\x60]*:([^\s/?#@"'<>\x60]+)@`,
    keywords: ["://"],
    groups: [1],
    rank: RANK.place,
    accept: (secret) => isValue(secret, true),
  },
  // A key as a URL's user, the way Sentry DSNs carry theirs.
  { kind: "url_key", pattern: String.raw`://([0-9a-fA-F]{32})[:@]`, keywords: ["://"], groups: [1], rank: RANK.place },
  // curl and friends: `-u user:password`, `--user=user:password`; not docker's `-u 1000:1000` (a uid and gid).
  {
    kind: "cli_password",
    pattern: String.raw`(?:^|\s)(?:-u|--user)(?:[ \t]+|=)["']?[^\s:"']+:([^\s"']+)`,
    keywords: ["-u"],
    groups: [1],
    rank: RANK.place,
    accept: (secret, match) => isValue(secret, true) && !/[\s=]["']?\d+:\d+$/.test(match),
  },
  // `mysql -pSECRET`: the value follows the flag with no space (`-p` alone prompts).
  {
    kind: "cli_password",
    pattern: String.raw`\b(?:mysql|mysqldump|mysqladmin|mysqlimport|mysqlcheck|mysqlsh|mariadb|mariadb-dump)\b[^\n|;&]*?[ \t]-p${VALUE}`,
    keywords: ["mysql", "mariadb"],
    groups: VALUE_GROUPS,
    rank: RANK.place,
    accept: (secret) => !REFERENCE.test(secret),
  },
  { kind: "cli_password", pattern: String.raw`\bsshpass[ \t]+-p[ \t]*${VALUE}`, keywords: ["sshpass"], groups: VALUE_GROUPS, rank: RANK.place, accept: acceptValue },
  { kind: "cli_password", pattern: String.raw`\bredis-cli\b[^\n|;&]*?[ \t]-a[ \t]+${VALUE}`, keywords: ["redis-cli"], groups: VALUE_GROUPS, rank: RANK.place, accept: acceptValue },
  // `--password X`, `--token=X`; never `--password-stdin`, and a value does not start with `-`.
  {
    kind: "cli_password",
    pattern: String.raw`(?i)(?:^|[ \t])--?(?:password|passwd|pass|passphrase|token|api-?key|secret|client-secret|auth-token|access-token|private-token)(?:=|[ \t]+)(?:'([^'\n]+)'|"([^"\n]+)"|([^\s'"-][^\s'"]*))`,
    keywords: ["-pass", "-token", "-api", "-secret", "-client", "-auth", "-access", "-private"],
    groups: VALUE_GROUPS,
    rank: RANK.place,
    accept: acceptValue,
  },
  // `Authorization: Basic …`, `Bearer …`, `token …`: the scheme stays.
  {
    kind: "basic_auth",
    pattern: String.raw`(?i)\bauthorization["']?[ \t]*[:=][ \t]*["']?basic[ \t]+([a-z0-9+/]{4,}={0,2})`,
    keywords: ["basic"],
    groups: [1],
    rank: RANK.place,
    // Basic credentials are `user:password` in base64 (RFC 7617): "fix Authorization: Basic auth" is not.
    accept: (secret) => Buffer.from(secret, "base64").toString("latin1").includes(":"),
  },
  {
    kind: "bearer",
    pattern: String.raw`(?i)\bauthorization["']?[ \t]*[:=][ \t]*["']?(?:bearer|token|bot)[ \t]+([a-z0-9._~+/-]{8,}=*)`,
    keywords: ["authorization"],
    groups: [1],
    rank: RANK.place,
  },
  { kind: "bearer", pattern: String.raw`(?i)\bbearer[ \t]+([a-z0-9._~+/-]{16,}=*)`, keywords: ["bearer"], groups: [1], rank: RANK.place },
  // Every secret Cairn issues: API keys, OAuth access tokens, UI sessions and sign-in links.
  // Random, so never all lower case: `cairn_http_request_duration_seconds` is a metric's name.
  {
    kind: "cairn_key",
    pattern: String.raw`\bcairn_(?:at_|ui_|login_)?[A-Za-z0-9_-]{24,}`,
    keywords: ["cairn_"],
    groups: [],
    rank: RANK.provider,
    accept: (secret) => /[A-Z0-9]/.test(secret.slice(secret.indexOf("_"))),
  },
  // header.payload.signature, each base64url; a JWT's header always starts with `{"` → `eyJ`.
  { kind: "jwt", pattern: String.raw`\beyJ[A-Za-z0-9_-]{5,}\.eyJ[A-Za-z0-9_-]{5,}\.[A-Za-z0-9_-]{10,}`, keywords: ["eyj"], groups: [], rank: RANK.provider },
  // Older key shapes than the rule set's (it wants the T3BlbkFJ marker or exact lengths); Anthropic's before OpenAI's `sk-`.
  { kind: "anthropic_key", pattern: String.raw`\bsk-ant-[A-Za-z0-9_-]{20,}`, keywords: ["sk-ant-"], groups: [], rank: RANK.provider },
  // Random, so never without a capital: `sk-ecdsa-sha2-nistp256@openssh.com` is an SSH key type.
  {
    kind: "openai_key",
    pattern: String.raw`\bsk-(?:proj-|svcacct-|admin-)?[A-Za-z0-9_-]{20,}`,
    keywords: ["sk-"],
    groups: [],
    rank: RANK.provider,
    accept: (secret) => /[A-Z]/.test(secret),
  },
  { kind: "aws_access_key", pattern: String.raw`\b(?:AKIA|ASIA|AGPA|AIDA|AROA|ANPA|ANVA|AIPA)[A-Z0-9]{16}\b`, keywords: ["akia", "asia", "agpa", "aida", "aroa", "anpa", "anva", "aipa"], groups: [], rank: RANK.provider },
  // Token shapes the rule set lacks, or knows only in one length.
  { kind: "slack_token", pattern: String.raw`\bxox[a-z]-[0-9A-Za-z-]{10,}`, keywords: ["xox"], groups: [], rank: RANK.provider },
  { kind: "google_oauth_token", pattern: String.raw`\b(?:ya29\.[0-9A-Za-z_-]{20,}|1//0[0-9A-Za-z_-]{40,})`, keywords: ["ya29.", "1//0"], groups: [], rank: RANK.provider },
  { kind: "vault_token", pattern: String.raw`\bhv[sbr]\.[0-9A-Za-z_-]{24,}`, keywords: ["hvs.", "hvb.", "hvr."], groups: [], rank: RANK.provider },
  { kind: "mailgun_key", pattern: String.raw`\bkey-[0-9a-f]{32}\b`, keywords: ["key-"], groups: [], rank: RANK.provider },
  { kind: "docker_pat", pattern: String.raw`\bdckr_pat_[0-9A-Za-z_-]{20,}`, keywords: ["dckr_pat_"], groups: [], rank: RANK.provider },
  { kind: "doppler_token", pattern: String.raw`\bdp\.(?:st|ct|sa|scim|audit|pt)\.(?:[a-z0-9_-]{2,35}\.)?[A-Za-z0-9]{40,44}\b`, keywords: ["dp."], groups: [], rank: RANK.provider },
  {
    kind: "discord_webhook",
    pattern: String.raw`(?i)\bhttps://(?:ptb\.|canary\.)?discord(?:app)?\.com/api/webhooks/[0-9]+/([0-9A-Za-z_-]{30,})`,
    keywords: ["discord"],
    groups: [1],
    rank: RANK.provider,
  },
  // Docker's config.json: `"auth": "<base64 of user:password>"`.
  { kind: "docker_auth", pattern: String.raw`"auth"[ \t]*:[ \t]*"([A-Za-z0-9+/]{8,}={0,2})"`, keywords: ['"auth"'], groups: [1], rank: RANK.place },
  // .netrc: `machine h login u password p`, or `password p` on a line of its own.
  { kind: "netrc_password", pattern: String.raw`\blogin[ \t]+\S+[ \t]+password[ \t]+(\S+)`, keywords: ["password"], groups: [1], rank: RANK.place, accept: acceptValue },
  { kind: "netrc_password", pattern: String.raw`^[ \t]*password[ \t]+(\S+)[ \t]*$`, keywords: ["password"], groups: [1], rank: RANK.place, accept: acceptValue },
  // Prose: "the staging password is Fake-Pw12", "the passphrase was changed to `x7…`", "the
  // password for the box: Tr0ub…". Only the sentence's first word after the verb is read, and a
  // bare one must look chosen, not written: "the password is required", "…is case-sensitive",
  // "…is stored in 1Password" stay.
  {
    kind: "prose_password",
    pattern: String.raw`(?i)\b(?:password|passphrase|passwd)(?:[ \t]+${PROSE_VERB}[ \t]+|[ \t]+(?:for|of|on)[ \t]+[^:=\n'"\x60]{1,40}?[ \t]*[:=][ \t]*)${PROSE_VALUE}`,
    keywords: ["password", "passphrase", "passwd"],
    groups: PROSE_GROUPS,
    rank: RANK.place,
    accept: (secret, match) => (QUOTED_AT_END.test(match.trimEnd()) ? isValue(secret, true) : looksChosen(secret)),
  },
  // "the API key is 9f2c…", "our access token was kq81…", "use token 8d3f… to call it": a key's or
  // a token's name, a verb or none, then a value as long and mixed as a generated one.
  {
    kind: "prose_secret",
    pattern: String.raw`(?i)\b(?:api[ _-]?key|access[ _-]?key|secret[ _-]?key|client[ _-]?secret|secret|(?:access|auth|bearer|api)[ _-]?token|token)(?:[ \t]+${PROSE_VERB})?[ \t]+${PROSE_VALUE}`,
    keywords: ["key", "secret", "token"],
    groups: PROSE_GROUPS,
    rank: RANK.place,
    accept: (secret) => looksGenerated(secret),
  },
  // A user and a password told as a pair after a word of logging in: "log in with admin / S3cure!Pw",
  // "creds: deploy@ci / gH7#kq2", "the credentials are ops:Tr0ub4dor&3", "sign in to Grafana as
  // admin/Adm1n2024". Nothing names the second word a password, so only its shape can tell: it
  // must look chosen and not be a file, a path or a host ("k8s/secrets.yaml", "db-01/db-02").
  {
    kind: "prose_login",
    pattern: String.raw`(?i)\b(?:log(?:ged)?[ \t-]?in|logins?|sign(?:ed)?[ \t-]?in|creds|credentials)\b[ \t]*:?(?:[ \t]+[\w.-]+){0,4}?[ \t]+[\x60'"]?[\w.@+-]{1,64}[\x60'"]?(?:[ \t]*/[ \t]*|:)${PROSE_VALUE}`,
    keywords: ["login", "log in", "log-in", "logged", "signin", "sign in", "sign-in", "signed", "creds", "credentials"],
    groups: PROSE_GROUPS,
    rank: RANK.place,
    accept: (secret) => looksChosen(secret) && !NOT_A_PAIRED_PASSWORD.test(secret),
  },
  // Connection strings: a field after `;` (`…;Password=…;`, `;Pwd=…`, Azure's `;AccountKey=…`, `;SharedAccessKey=…`).
  {
    kind: "connection_string",
    pattern: String.raw`(?i);[ \t]*(?:password|pwd|account[ _]?key|shared[ _]?access[ _]?key)[ \t]*=[ \t]*([^;"'\s]+)`,
    keywords: [";"],
    groups: [1],
    rank: RANK.place,
    accept: (secret) => isValue(secret, false),
  },
  // XML: `<password>…</password>`, `<apiKey>…</apiKey>`.
  {
    kind: "assignment",
    pattern: String.raw`(?i)(${SECRET_NAME})>([^<\n]+)</`,
    keywords: ["</"],
    groups: [2],
    rank: RANK.assignment,
    accept: (secret) => isValue(secret, true),
  },
  // NAME=value, NAME: value, "name": "value", name => value; a quote may close the name.
  {
    kind: "assignment",
    pattern: String.raw`(?i)(${SECRET_NAME})["']?[ \t]*(?:=|:=|=>|:)[ \t]*${VALUE}(?:[ \t]*[,;)}|?!=<>&+*/])?`,
    keywords: ["pass", "pwd", "secret", "token", "key"],
    groups: [2, 3, 4],
    rank: RANK.assignment,
    accept: (secret, match, _line, rest) => acceptValue(secret, match) && !continuesAsProse(secret, match, rest),
  },
];

/** Each caller rule as a function that compiles it. */
export function callerRuleBuilders(): (() => SecretRule)[] {
  return SOURCES.map((source) => () => ({ ...source, pattern: RE2JS.compile(source.pattern) }));
}
