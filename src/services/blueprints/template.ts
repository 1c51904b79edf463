// The template renderer of blueprint titles and descriptions (CONTRACT §17): `{{ path }}`
// placeholders replaced by values from a fixed set of roots, and nothing else — no expressions,
// no filters, no loops, no calls. A placeholder is data lookup only, so a blueprint can never make
// the server run anything.
//
// Placeholders are found by one pass over the text (`scanPlaceholders`), never by a regular
// expression over the whole template: a lazy `\{\{(.*?)\}\}` retries from every `{{`, so 4,000
// unclosed `{{` in one description cost 16 million steps (issue 25).

/** The inside of a placeholder: a dotted name, white space around it allowed (`{{ nodes.build.output.urls }}`). */
const PLACEHOLDER_PATH = /^\s*([A-Za-z_][A-Za-z0-9_-]*(?:\.[A-Za-z0-9_-]+)*)\s*$/;
/** A placeholder never spans lines. */
const LINE_BREAK = /[\n\r\u2028\u2029]/g;

/** One `{{…}}` of a template: where it starts and ends (exclusive), and its dotted path unless malformed. */
export interface PlaceholderSpan {
  start: number;
  end: number;
  path: string[] | null;
}

/**
 * Every `{{…}}` of a template, left to right, in time linear in its length. A span opens at a
 * `{{` and closes at the first `}}` after it on the same line; a `{{` with no `}}` left on its
 * line is text. The next `}}` and the next line break are each searched forward once and kept, so
 * no character is looked at more than a few times however many `{{` there are.
 */
export function scanPlaceholders(template: string): PlaceholderSpan[] {
  const spans: PlaceholderSpan[] = [];
  let close = -2;
  let lineBreak = -2;
  let at = template.indexOf("{{");
  while (at !== -1) {
    const from = at + 2;
    if (close !== -1 && close < from) close = template.indexOf("}}", from);
    if (close === -1) break;
    if (lineBreak !== -1 && lineBreak < from) {
      LINE_BREAK.lastIndex = from;
      lineBreak = LINE_BREAK.exec(template)?.index ?? -1;
    }
    if (lineBreak !== -1 && lineBreak < close) {
      // Every `{{` before this line break closes after it: none of them opens a placeholder.
      at = template.indexOf("{{", lineBreak + 1);
      continue;
    }
    const inner = PLACEHOLDER_PATH.exec(template.slice(from, close));
    spans.push({ start: at, end: close + 2, path: inner ? (inner[1] as string).split(".") : null });
    at = template.indexOf("{{", close + 2);
  }
  return spans;
}

/** The placeholders of a template, as dotted paths split into parts; malformed ones apart. */
export function placeholders(template: string): { paths: string[][]; malformed: string[] } {
  const paths: string[][] = [];
  const malformed: string[] = [];
  for (const span of scanPlaceholders(template)) {
    if (span.path) paths.push(span.path);
    else malformed.push(template.slice(span.start, span.end));
  }
  return { paths, malformed };
}

/** The value at a dotted path, or undefined; own properties only (never the prototype's), array indexes as numbers. */
export function valueAt(root: unknown, path: readonly string[]): unknown {
  let value = root;
  for (const part of path) {
    if (value === null || typeof value !== "object" || !Object.hasOwn(value, part)) return undefined;
    value = (value as Record<string, unknown>)[part];
  }
  return value;
}

const text = (value: unknown): string => {
  if (value === undefined || value === null) return "";
  if (typeof value === "string") return value;
  if (typeof value === "number" || typeof value === "boolean") return String(value);
  return JSON.stringify(value);
};

/**
 * Replaces each placeholder with its value as text (objects and arrays as JSON; a missing value as
 * nothing), and cuts the result to `maxLength`. The saved document was checked so that every
 * placeholder names an allowed root; a malformed one is left as written.
 */
export function renderTemplate(template: string, context: Record<string, unknown>, maxLength: number): string {
  const parts: string[] = [];
  let written = 0;
  for (const span of scanPlaceholders(template)) {
    if (!span.path) continue;
    parts.push(template.slice(written, span.start), text(valueAt(context, span.path)));
    written = span.end;
  }
  parts.push(template.slice(written));
  const rendered = parts.join("");
  return rendered.length <= maxLength ? rendered : `${rendered.slice(0, maxLength - 1)}…`;
}
