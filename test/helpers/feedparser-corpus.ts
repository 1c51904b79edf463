import { readdirSync, readFileSync } from "node:fs";
import { dirname, join, relative, resolve } from "node:path";
import { fileURLToPath } from "node:url";
import { decodeFeedBody } from "../../src/services/feeds/document-text.js";

/**
 * The test documents of kurtmckee/feedparser (BSD-2-Clause; see
 * test/fixtures/feeds/feedparser/README.md). Each opens with a comment that says what it tests:
 * `Description:`, `Expect:` (a Python expression over feedparser's result, `bozo` meaning the
 * document is not well-formed) and sometimes `Header:` lines of the HTTP answer it stands for.
 */
const CORPUS_ROOT = resolve(dirname(fileURLToPath(import.meta.url)), "../fixtures/feeds/feedparser");

export interface CorpusDocument {
  /** Relative to CORPUS_ROOT, with forward slashes: `wellformed/sanitize/entry_content_script.xml`. */
  path: string;
  bytes: Buffer;
  description: string;
  expect: string;
  contentType: string | undefined;
}

export function corpusDocuments(folder: string): CorpusDocument[] {
  return readdirSync(join(CORPUS_ROOT, folder), { recursive: true, withFileTypes: true })
    .filter((entry) => entry.isFile() && /\.(xml|json)$/.test(entry.name))
    .map((entry) => join(entry.parentPath, entry.name))
    .sort()
    .map((file) => {
      const bytes = readFileSync(file);
      // The header is ASCII in whatever encoding the document is in, so it is read as the parser reads it.
      const text = decodeFeedBody(bytes);
      const field = (name: string): string => new RegExp(`${name}:\\s*([\\s\\S]*?)\\s*(?:\\n[A-Z][a-zA-Z]+:|-->)`).exec(text)?.[1]?.trim() ?? "";
      const header = /^Header:\s*Content-type:\s*(.*)$/im.exec(text)?.[1]?.trim();
      return { path: relative(CORPUS_ROOT, file).split("\\").join("/"), bytes, description: field("Description"), expect: field("Expect"), contentType: header };
    });
}

/** Whether the document's expectation says it is not well-formed (`bozo`, but not `not bozo`). */
export function expectsIllFormed(document: CorpusDocument): boolean {
  return /(?:^|\s|\()bozo\b/.test(document.expect) && !/\bnot bozo\b/.test(document.expect);
}

/**
 * The string an expectation compares a text field with, for `<field> == <Python string>`, where the
 * field is an entry's description, summary, title or content value, or the feed's title, subtitle,
 * tagline, info or copyright; undefined for any other expectation.
 */
export function expectedText(expect: string): string | undefined {
  const comparison = /(?:entries\[0\]\[['"](?:description|summary|title)['"]\]|entries\[0\]\[['"]content['"]\]\[0\]\[['"]value['"]\]|feed\[['"](?:title|subtitle|tagline|info|copyright|rights)['"]\])\s*==\s*/.exec(expect);
  if (!comparison) return undefined;
  return pythonStrings(expect.slice(comparison.index + comparison[0].length));
}

/** Python string literals joined by `+` at the start of `source`, as one string; undefined if none. */
function pythonStrings(source: string): string | undefined {
  let rest = source.trimStart();
  let result: string | undefined;
  for (;;) {
    const literal = /^[uUbBrR]?("""|'''|"|')/.exec(rest);
    if (!literal) return result;
    const raw = /^[rR]/.test(rest);
    const quote = literal[1] as string;
    let at = literal[0].length;
    let value = "";
    while (at < rest.length && !rest.startsWith(quote, at)) {
      const character = rest[at] as string;
      if (character === "\\" && !raw) {
        const [decoded, length] = pythonEscape(rest, at);
        value += decoded;
        at += length;
      } else {
        value += character;
        at++;
      }
    }
    result = (result ?? "") + value;
    rest = rest.slice(at + quote.length).trimStart();
    if (!rest.startsWith("+")) return result;
    rest = rest.slice(1).trimStart();
  }
}

function pythonEscape(source: string, at: number): [string, number] {
  const next = source[at + 1] ?? "";
  const simple: Record<string, string> = { n: "\n", t: "\t", r: "\r", "0": "\0", "\\": "\\", "'": "'", '"': '"', a: "\x07", b: "\b", f: "\f", v: "\v", "\n": "" };
  if (next in simple) return [simple[next] as string, 2];
  const digits = next === "x" ? 2 : next === "u" ? 4 : next === "U" ? 8 : 0;
  if (digits > 0) return [String.fromCodePoint(Number.parseInt(source.slice(at + 2, at + 2 + digits), 16)), 2 + digits];
  return ["\\", 1];
}
