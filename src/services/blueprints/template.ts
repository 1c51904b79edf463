// The template renderer of blueprint titles and descriptions (CONTRACT §17): `{{ path }}`
// placeholders replaced by values from a fixed set of roots, and nothing else — no expressions,
// no filters, no loops, no calls. A placeholder is data lookup only, so a blueprint can never make
// the server run anything.

/** `{{ params.region }}`, `{{item}}`, `{{ nodes.build.output.urls }}`: dotted names, no spaces inside. */
const PLACEHOLDER = /\{\{\s*([A-Za-z_][A-Za-z0-9_-]*(?:\.[A-Za-z0-9_-]+)*)\s*\}\}/g;
/** Anything that looks like a placeholder, to find the malformed ones. */
const ANY_PLACEHOLDER = /\{\{(.*?)\}\}/g;

/** The placeholders of a template, as dotted paths split into parts; malformed ones apart. */
export function placeholders(template: string): { paths: string[][]; malformed: string[] } {
  const paths: string[][] = [];
  const malformed: string[] = [];
  for (const match of template.matchAll(ANY_PLACEHOLDER)) {
    const whole = match[0];
    const valid = [...whole.matchAll(PLACEHOLDER)][0];
    if (valid && valid[0] === whole) paths.push((valid[1] as string).split("."));
    else malformed.push(whole);
  }
  return { paths, malformed };
}

/** The value at a dotted path, or undefined; own properties only, array indexes as numbers. */
function lookup(context: Record<string, unknown>, path: readonly string[]): unknown {
  let value: unknown = context;
  for (const part of path) {
    if (value === null || typeof value !== "object") return undefined;
    if (!Object.hasOwn(value, part)) return undefined;
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
 * placeholder names an allowed root.
 */
export function renderTemplate(template: string, context: Record<string, unknown>, maxLength: number): string {
  const rendered = template.replace(PLACEHOLDER, (_whole, path: string) => text(lookup(context, path.split("."))));
  return rendered.length <= maxLength ? rendered : `${rendered.slice(0, maxLength - 1)}…`;
}
