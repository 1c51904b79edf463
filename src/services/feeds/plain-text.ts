import { Parser, Tokenizer } from "htmlparser2";

/*
 * What "plain text" means for text taken from a feed (CONTRACT §15: "scripts, styles and tags
 * stripped"). Every string `htmlToText` and `textToPlainText` return:
 *
 * 1. holds no `<` directly followed by an ASCII letter, `/`, `!` or `?`, so no HTML parser finds a
 *    tag, end tag, comment, doctype, CDATA section or processing instruction in it — and with no
 *    tag there is no attribute, so no event handler and no URL an element would follow;
 * 2. holds no character reference an HTML parser would decode (`&lt;`, `&#60;`, `&#x3c;`, legacy
 *    `&lt` without the semicolon…): decoding it again changes nothing, so no entity variant of (1)
 *    or (3) hides in it;
 * 3. holds no `javascript:`, `vbscript:` or `data:text/html` (any case, white space allowed
 *    between the letters and around the colon) and nothing shaped like a handler (`on…=`);
 * 4. never holds the content of `script`, `style` and the other elements of DROPPED_ELEMENTS, in
 *    whatever round of decoding they appear;
 * 5. holds no control character but the line break, no lone surrogate, collapsed white space
 *    (one space between words, at most one blank line between blocks, none at either end), and
 *    at most `maxChars` UTF-16 code units, a surrogate pair never split.
 *
 * Feeds escape HTML once inside XML, and often twice, so what one conversion yields as text may
 * again be markup (`&lt;script&gt;` arrives as the text `<script>`). The conversion therefore runs
 * again on its own output until the output no longer changes (at most MAX_ROUNDS times): text
 * that still looks like markup after decoding is treated as markup and dropped. The price is that
 * a literal tag in prose ("the <details> element", written `&amp;lt;details&amp;gt;` in the feed)
 * loses its tag name. Whatever remains after the last round (only a document escaped more than
 * MAX_ROUNDS times leaves some) and the scheme and handler shapes of (3) are shown with full-width
 * look-alikes (＜ ＆ ： ＝), which no HTML or URL parser reads as syntax.
 */

/**
 * Elements whose content is never text a reader wants, and may be code: dropped whole. (`embed`
 * and `frame` are void elements: they have no content, and attributes never survive anyway.)
 */
const DROPPED_ELEMENTS = new Set([
  "script",
  "style",
  "noscript",
  "template",
  "iframe",
  "frameset",
  "noframes",
  "object",
  "applet",
  "noembed",
  "svg",
  "math",
]);

/** Elements that start and end a line of their own. */
const LINE_ELEMENTS = new Set([
  "address",
  "article",
  "aside",
  "caption",
  "dd",
  "details",
  "div",
  "dl",
  "dt",
  "fieldset",
  "figcaption",
  "figure",
  "footer",
  "form",
  "header",
  "hr",
  "li",
  "main",
  "nav",
  "ol",
  "section",
  "summary",
  "table",
  "tbody",
  "tfoot",
  "thead",
  "tr",
  "ul",
]);

/** Elements that are paragraphs: a blank line before and after. */
const PARAGRAPH_ELEMENTS = new Set(["blockquote", "h1", "h2", "h3", "h4", "h5", "h6", "p", "pre"]);

/** Cells sit side by side, a space apart. */
const CELL_ELEMENTS = new Set(["td", "th"]);

const MAX_ROUNDS = 4;

/**
 * htmlparser2 keeps its open elements in an array it shifts and unshifts, so its cost grows with
 * the square of the nesting depth; past this depth the rest of the document is not read (browsers
 * cap their trees too).
 */
const MAX_DEPTH = 256;

/** Input longer than this is cut before parsing: a summary is a few thousand characters at most. */
const MAX_HTML_INPUT_CHARS = 1024 * 1024;

const ELLIPSIS = "…";

/**
 * Text with line structure from HTML, built as the parser reports it: spaces between words
 * collapse, block boundaries ask for line breaks that are written only when more text follows,
 * and nothing is kept past `limit` characters.
 */
class TextBuilder {
  private readonly parts: string[] = [];
  private length = 0;
  private pendingBreaks = 0;
  private pendingSpace = false;

  constructor(private readonly limit: number) {}

  get full(): boolean {
    return this.length >= this.limit;
  }

  requestBreaks(count: number): void {
    this.pendingBreaks = Math.min(2, Math.max(this.pendingBreaks, count));
  }

  /** A `<br>`: each one is a line break of its own, two make a blank line. */
  addLineBreak(): void {
    this.pendingBreaks = Math.min(2, this.pendingBreaks + 1);
  }

  requestSpace(): void {
    this.pendingSpace = true;
  }

  /** HTML text, whose white space is insignificant; `newlinesBreak` keeps its line breaks. */
  addText(text: string, newlinesBreak: boolean): void {
    const lines = newlinesBreak ? text.split("\n") : [text];
    lines.forEach((line, index) => {
      if (index > 0) this.addLineBreak();
      const words = /\S+/g;
      let end = 0;
      for (let word = words.exec(line); word !== null && !this.full; word = words.exec(line)) {
        if (word.index > end) this.pendingSpace = true;
        this.write(word[0]);
        end = word.index + word[0].length;
      }
      if (end < line.length) this.pendingSpace = true;
    });
  }

  /** Preformatted text: its spaces and line breaks are kept. */
  addPreformatted(text: string): void {
    text.split("\n").forEach((line, index) => {
      if (index > 0) this.addLineBreak();
      const kept = line.replace(/\s+$/, "");
      if (kept !== "") this.write(kept);
    });
  }

  private write(piece: string): void {
    if (this.full) return;
    // Breaks and spaces are owed only between pieces of text, never before the first.
    const separator = this.length === 0 ? "" : this.pendingBreaks > 0 ? "\n".repeat(this.pendingBreaks) : this.pendingSpace ? " " : "";
    this.pendingBreaks = 0;
    this.pendingSpace = false;
    this.parts.push(separator, piece);
    this.length += separator.length + piece.length;
  }

  toString(): string {
    return this.parts.join("");
  }
}

interface RoundOptions {
  /** Line breaks in text are kept: the input is the text of an earlier round, not HTML. */
  newlinesBreak: boolean;
  limit: number;
}

/** One HTML → text conversion: htmlparser2's tokens, never a pattern over the markup. */
function convertOnce(html: string, options: RoundOptions): string {
  const builder = new TextBuilder(options.limit);
  let droppedDepth = 0;
  let preDepth = 0;
  let depth = 0;
  let stopped = false;
  const stop = (): void => {
    stopped = true;
    parser.pause();
  };
  const parser = new Parser(
    {
      onopentag(name) {
        if (++depth > MAX_DEPTH && !stopped) stop();
        if (DROPPED_ELEMENTS.has(name)) droppedDepth++;
        if (droppedDepth > 0) return;
        if (name === "br") builder.addLineBreak();
        else if (name === "pre") {
          preDepth++;
          builder.requestBreaks(2);
        } else if (PARAGRAPH_ELEMENTS.has(name)) builder.requestBreaks(2);
        else if (LINE_ELEMENTS.has(name)) {
          builder.requestBreaks(1);
          if (name === "li") builder.addText("- ", false);
        } else if (CELL_ELEMENTS.has(name)) builder.requestSpace();
      },
      onclosetag(name) {
        depth--;
        if (DROPPED_ELEMENTS.has(name)) {
          droppedDepth = Math.max(0, droppedDepth - 1);
          return;
        }
        if (droppedDepth > 0) return;
        if (name === "pre") preDepth = Math.max(0, preDepth - 1);
        if (PARAGRAPH_ELEMENTS.has(name)) builder.requestBreaks(2);
        else if (LINE_ELEMENTS.has(name)) builder.requestBreaks(1);
        else if (CELL_ELEMENTS.has(name)) builder.requestSpace();
      },
      ontext(text) {
        if (stopped || droppedDepth > 0) return;
        if (builder.full) return stop();
        if (preDepth > 0) builder.addPreformatted(text);
        else builder.addText(text, options.newlinesBreak);
      },
    },
    { decodeEntities: true, lowerCaseTags: true, lowerCaseAttributeNames: true },
  );
  parser.write(html);
  // A parser stopped (too deep, or enough text) stays stopped: ending it would close every open
  // element one by one, and report text nobody reads.
  if (!stopped) parser.end();
  return builder.toString();
}

const MARKUP_START = /<[A-Za-z/!?]/;
const REFERENCE_START = /&(?:#|[A-Za-z])/;

/** Control characters (but the line break) and lone surrogates: never part of readable text. */
function removeUnreadable(text: string): string {
  // eslint-disable-next-line no-control-regex -- the control characters are what this removes
  return text.replace(/\r\n?/g, "\n").replace(/[\u0000-\u0009\u000b-\u001f\u007f-\u009f]|[\ud800-\udbff](?![\udc00-\udfff])|(?<![\ud800-\udbff])[\udc00-\udfff]/g, (match) =>
    match === "\t" ? " " : "",
  );
}

// The letters of a script scheme may be split by white space (browsers drop tabs and line breaks
// inside URLs); the colon is what makes it a scheme, so the colon is what is replaced.
const SCRIPT_SCHEME = /((?:j\s*a\s*v\s*a|v\s*b)\s*s\s*c\s*r\s*i\s*p\s*t\s*):/gi;
// Data URLs of the types a browser runs script in; "metadata:" and "Data: …" in prose are left alone.
const SCRIPT_DATA_URL = /(\bd\s*a\s*t\s*a\s*):(\s*(?:text\s*\/\s*(?:html|xml)|image\s*\/\s*svg|application\s*\/\s*(?:xhtml|xml)))/gi;
const HANDLER_SHAPE = /(\bon[a-z]+\s*)=/gi;

/** Where the `&` of each character reference an HTML parser would decode in `text` stands. */
function referenceStarts(text: string): number[] {
  const starts: number[] = [];
  const ignore = (): void => undefined;
  // With every `<` swapped for a character of the same length, the tokenizer sees text alone and
  // reports each reference it decodes, by where it ends; a reference holds no `&` after its first.
  const tokenizer = new Tokenizer(
    { decodeEntities: true },
    {
      ontextentity: (_codepoint, endIndex) => starts.push(text.lastIndexOf("&", endIndex - 1)),
      ontext: ignore,
      onattribdata: ignore,
      onattribentity: ignore,
      onattribend: ignore,
      onattribname: ignore,
      oncdata: ignore,
      onclosetag: ignore,
      oncomment: ignore,
      ondeclaration: ignore,
      onend: ignore,
      onopentagend: ignore,
      onopentagname: ignore,
      onprocessinginstruction: ignore,
      onselfclosingtag: ignore,
    },
  );
  tokenizer.write(text.replaceAll("<", "\ue000"));
  tokenizer.end();
  return starts;
}

/** Shows what could still read as syntax with full-width look-alikes (rules 1–3 above). */
function defang(text: string): string {
  const characters = text.split("");
  for (const start of referenceStarts(text)) if (characters[start] === "&") characters[start] = "＆";
  // Each look-alike is one UTF-16 code unit, like what it replaces, so the positions above hold.
  return characters
    .join("")
    .replace(/<(?=[A-Za-z/!?])/g, "＜")
    .replace(SCRIPT_SCHEME, "$1：")
    .replace(SCRIPT_DATA_URL, "$1：$2")
    .replace(HANDLER_SHAPE, "$1＝");
}

/** At most `maxChars` UTF-16 code units, ending in an ellipsis when cut, never half a surrogate pair. */
export function truncateText(text: string, maxChars: number): string {
  if (text.length <= maxChars) return text;
  if (maxChars <= 0) return "";
  let end = Math.max(0, maxChars - ELLIPSIS.length);
  const last = text.charCodeAt(end - 1);
  if (last >= 0xd800 && last <= 0xdbff) end--;
  return text.slice(0, end).replace(/\s+$/, "") + ELLIPSIS;
}

/** Tidies white space the rounds leave: no trailing spaces, at most one blank line, trimmed. */
function tidyLines(text: string): string {
  return text
    .split("\n")
    .map((line) => line.replace(/[ \t]+$/, ""))
    .join("\n")
    .replace(/\n{3,}/g, "\n\n")
    .trim();
}

/**
 * HTML from a feed as plain text (see the rules at the top of this file): `script`, `style` and
 * the other DROPPED_ELEMENTS vanish with their content, attributes never survive, block elements
 * and `<br>` become line breaks, entities are decoded, and the result has at most `maxChars`
 * UTF-16 code units.
 */
export function htmlToText(html: string, maxChars: number): string {
  // Later rounds may drop much of what an earlier one kept, so they work on more than will be shown.
  const roundLimit = Math.max(maxChars * 8, 16 * 1024);
  let text = removeUnreadable(convertOnce(removeUnreadable(html.slice(0, MAX_HTML_INPUT_CHARS)), { newlinesBreak: false, limit: roundLimit }));
  for (let round = 1; round < MAX_ROUNDS && (MARKUP_START.test(text) || REFERENCE_START.test(text)); round++) {
    const next = removeUnreadable(convertOnce(text, { newlinesBreak: true, limit: roundLimit }));
    if (next === text) break;
    text = next;
  }
  return truncateText(tidyLines(defang(text)), maxChars);
}

/**
 * Text a feed declares to be plain (a JSON Feed `content_text`, an Atom `type="text"` element) under
 * the same rules: nothing in it is parsed as markup, so a literal `<b>` stays visible, as `＜b>`.
 */
export function textToPlainText(text: string, maxChars: number): string {
  const lines = removeUnreadable(text.slice(0, MAX_HTML_INPUT_CHARS))
    .split("\n")
    .map((line) => line.replace(/\s+/g, " ").trim());
  return truncateText(tidyLines(defang(lines.join("\n"))), maxChars);
}

/** One line of plain text (a title): line breaks become spaces. */
export function singleLine(text: string): string {
  return text.replace(/\s+/g, " ").trim();
}
