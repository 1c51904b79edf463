/**
 * HTTP's vocabulary, which a model calling MCP tools has no use for: status codes, header names, REST,
 * routes, methods with paths, query strings. Counts and limits ("1 to 500", "up to 500 entries",
 * "the oldest 200 changes") are numbers too, so they are taken out before looking for a status.
 */
const HTTP_WORDS = [
  /\bREST\b/,
  /\bHTTP\b/,
  /\bheaders?\b/i,
  /\broutes?\b/i,
  /query string|\?[a-z_]+=|&[a-z_]+=/i,
  /Idempotency-Key|If-Match|ETag|Last-Event-ID|Retry-After|WWW-Authenticate|\bX-[A-Z][A-Za-z]+/,
  /\b(?:GET|POST|PUT|PATCH|DELETE) \//,
  /\bstatus (?:code )?\d/i,
];
const COUNTS = /\b(?:1 to|up to|at most|oldest|first|last)\s+\d+/gi;
const STATUS = /\b[1-5]\d\d\b/;

export function mentionsHttp(text: string): boolean {
  return HTTP_WORDS.some((pattern) => pattern.test(text)) || STATUS.test(text.replace(COUNTS, ""));
}

/** Every `description` inside a JSON schema. */
export function descriptionsIn(schema: unknown): string[] {
  if (Array.isArray(schema)) return schema.flatMap(descriptionsIn);
  if (schema === null || typeof schema !== "object") return [];
  return Object.entries(schema).flatMap(([key, value]) => (key === "description" && typeof value === "string" ? [value] : descriptionsIn(value)));
}
