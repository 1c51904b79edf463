import { describe, expect, it } from "vitest";
import { newMeter, redactSecrets, redactSecretsInTurns } from "../../src/services/redaction.js";
import { SECRET_LINES, UNTOUCHED_LINES } from "../fixtures/secrets.js";

const escape = (text: string): string => text.replace(/[.*+?^${}()|[\]\\]/g, "\\$&");

/** `text` as it must come out: each secret replaced by one marker, everything around it as it was. */
function redactedShape(text: string, secrets: string[]): RegExp {
  let pattern = escape(text);
  for (const secret of secrets) pattern = pattern.split(escape(secret)).join("\\[REDACTED:[a-z0-9_]+\\]");
  return new RegExp(`^${pattern}$`);
}

describe("redacting secrets", () => {
  it("has a table of at least 100 realistic lines across at least 30 kinds, and 30 lines to leave alone", () => {
    expect(SECRET_LINES.length).toBeGreaterThanOrEqual(100);
    expect(new Set(SECRET_LINES.map((line) => line.kind)).size).toBeGreaterThanOrEqual(30);
    expect(UNTOUCHED_LINES.length).toBeGreaterThanOrEqual(30);
  });

  for (const { kind, text, secrets } of SECRET_LINES) {
    it(`removes the ${kind} in ${JSON.stringify(text.slice(0, 48))}… and keeps the text around it`, () => {
      const result = redactSecrets(text);
      for (const secret of secrets) expect(result.text).not.toContain(secret);
      expect(result.text).toMatch(redactedShape(text, secrets));
      expect(result.redactions).toBe(secrets.length);
    });
  }

  it("leaves prose, code, hashes, ids, images and placeholders alone", () => {
    for (const line of UNTOUCHED_LINES) expect(redactSecrets(line), line).toEqual({ text: line, redactions: 0 });
  });

  it("keeps the name of what was set, so a digest still knows a secret was there", () => {
    const samples: [string, string][] = [
      ["PGPASSWORD=pw-value-1 psql", "PGPASSWORD=[REDACTED:assignment] psql"],
      ["SECRET_KEY_BASE=0123456789abcdef", "SECRET_KEY_BASE=[REDACTED:assignment]"],
      ['{"secretAccessKey": "abc/def+ghi"}', '{"secretAccessKey": "[REDACTED:assignment]"}'],
      ["postgres://app:hunter22@db/app", "postgres://app:[REDACTED:url_password]@db/app"],
      ["Authorization: Basic YWRtaW46aHVudGVyMg==", "Authorization: Basic [REDACTED:basic_auth]"],
      ["machine h login u password hunter22", "machine h login u password [REDACTED:netrc_password]"],
      ["mysql -uroot -phunter22 shop", "mysql -uroot -p[REDACTED:cli_password] shop"],
      ["password=hunter2 and more", "password=[REDACTED:assignment] and more"],
      // A dotted value is code after `= ` (`key = config.key`), a password in a `.env` line.
      ["DB_PASSWORD=hunter.two", "DB_PASSWORD=[REDACTED:assignment]"],
    ];
    for (const [input, expected] of samples) expect(redactSecrets(input).text, input).toBe(expected);
  });

  it("names a token by its provider's rule, and counts a token inside an assignment or a header once", () => {
    const token = `xoxb-12345678901-1234567890123-${"aB3".repeat(8)}`;
    const jwt = `eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiJhZ2VudCJ9.${"S1g".repeat(10)}`;
    const result = redactSecrets(`SLACK_BOT_TOKEN=${token}\nAuthorization: Bearer ${jwt}`);
    expect(result.text).toBe("SLACK_BOT_TOKEN=[REDACTED:slack_bot_token]\nAuthorization: Bearer [REDACTED:jwt]");
    expect(result.redactions).toBe(2);
  });

  it("does nothing more to text it redacted before", () => {
    const text = SECRET_LINES.map((line) => line.text).join("\n");
    const once = redactSecrets(text);
    expect(once.redactions).toBeGreaterThanOrEqual(SECRET_LINES.length);
    expect(redactSecrets(once.text)).toEqual({ text: once.text, redactions: 0 });
  });

  it("replaces the right characters after text outside ASCII", () => {
    expect(redactSecrets("ünïcødé 🙂🙂 — password=hunter22 ✓").text).toBe("ünïcødé 🙂🙂 — password=[REDACTED:assignment] ✓");
  });

  it("takes a very long random-looking token whole, but not a long run of one character", () => {
    const base64 = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
    const blob = Array.from({ length: 600 }, (_, index) => base64[(index * 47 + 13) % 64]).join("");
    expect(redactSecrets(`blob: ${blob} end`).text).toBe("blob: [REDACTED:long_token] end");
    const dull = `rule ${"=".repeat(2000)} ${"a".repeat(2000)}`;
    expect(redactSecrets(dull)).toEqual({ text: dull, redactions: 0 });
  });

  it("ends a private key cut off before its END line at the first line that is not key, even when another block follows", () => {
    const [cut, whole] = SECRET_LINES.filter((line) => line.kind === "private_key").slice(-2).reverse().map((line) => line.secrets[0] as string);
    const text = `${cut as string}\nnotes between the two keys\n${whole as string}\nafter`;
    expect(redactSecrets(text)).toEqual({ text: "[REDACTED:private_key]\nnotes between the two keys\n[REDACTED:private_key]\nafter", redactions: 2 });
  });

  it("finds a secret in a line longer than the search window, wherever it sits", () => {
    const token = (SECRET_LINES.find((line) => line.kind === "github") as { secrets: string[] }).secrets[0] as string;
    for (const at of [0, 3000, 3072, 4090, 10_000]) {
      const text = `${"word ".repeat(Math.floor(at / 5))}${token} ${"more ".repeat(2000)}`;
      expect(redactSecrets(text).text, String(at)).not.toContain(token);
    }
  });
});

describe("redaction's work", () => {
  // Counted, not timed: the meter adds up every search and the characters it was handed (the
  // engine's work is linear in those), the keyword scans and the private key scanner's reads.
  // Each hostile input is built to be slow for some rule: long runs of separators, endless
  // prefixes, dense matches, armour lines without an END.
  const fill = (unit: string, size: number): string => unit.repeat(Math.ceil(size / unit.length)).slice(0, size);
  const corpus = `${[...SECRET_LINES.map((line) => line.text), ...UNTOUCHED_LINES].join("\n")}\n`;
  const hostile: Record<string, string> = {
    colons: "a:",
    equals: "=",
    ats: "@",
    dashes: "-",
    "armour without END": "-----BEGIN PRIVATE KEY-----\n",
    "BEGIN without label end": "-----BEGIN ",
    "key=": "key=",
    "password ": "password ",
    "URL userinfo": "https://a:",
    "dash runs": "a-",
    "underscore runs": "_a",
    "slack prefixes": "xoxb-1-",
    "JWT prefixes": "eyJabcdefgh.",
    "dense assignments": "api_key: xxxxxxxxxxxxxxxxxxxxxxxx ",
    "JSON keys": '"a":"',
    "escaped newlines": "\\n",
    "Google prefixes": "AIza",
    "mysql flags": "mysql -p",
    "quotes without end": "password='",
    "markers without end": "[REDACTED:",
    realistic: corpus,
  };
  /** A named bound: one keyword scan per character, and each line searched a few times by each rule it holds a keyword of (218 at most today). */
  const WORK_PER_CHAR = 512;

  for (const [name, unit] of Object.entries(hostile)) {
    it(`stays linear on ${name}: 8 times the input is at most 8.5 times the work, and under ${WORK_PER_CHAR} per character`, () => {
      const work = [32_768, 262_144].map((size) => {
        const meter = newMeter();
        redactSecrets(fill(unit, size), meter);
        return { size, ...meter };
      });
      const [small, large] = work as [(typeof work)[0], (typeof work)[0]];
      expect(large.chars).toBeLessThanOrEqual(8.5 * small.chars);
      expect(large.searches).toBeLessThanOrEqual(8.5 * small.searches + 1);
      expect(large.chars / large.size).toBeLessThanOrEqual(WORK_PER_CHAR);
    });
  }
});

describe("redacting a long text in turns", () => {
  const table = [...SECRET_LINES.map((line) => line.text), ...UNTOUCHED_LINES].join("\n");
  const long = Array.from({ length: 40 }, () => table).join("\n");

  it("finds what one pass finds, key blocks spanning pieces included", async () => {
    expect(long.length).toBeGreaterThan(200_000);
    expect(await redactSecretsInTurns(long)).toEqual(redactSecrets(long));
  });

  it("lets the event loop run between its pieces", async () => {
    const turns: string[] = [];
    const redacting = redactSecretsInTurns(long).then(() => turns.push("redacted"));
    setImmediate(() => turns.push("another request's turn"));
    await redacting;
    expect(turns).toEqual(["another request's turn", "redacted"]);
  });

  it("runs in one go below a piece's size", async () => {
    const turns: string[] = [];
    const short = SECRET_LINES.slice(0, 5).map((line) => line.text).join("\n");
    const redacting = redactSecretsInTurns(short).then(() => turns.push("redacted"));
    setImmediate(() => turns.push("another request's turn"));
    await redacting;
    // Done before the event loop took another turn.
    expect(turns).toEqual(["redacted"]);
  });
});
