import type { Request } from "express";
import { invalid } from "../core/errors.js";
import { isLineSource } from "../core/line-source.js";
import { inputLayout, textBodyOf, type JsonSchema } from "../../tools/layout.js";
import { QUERY_CREDENTIALS, type Operation } from "../../tools/operation.js";

function typesOf(schema: JsonSchema | undefined): string[] {
  if (!schema) return [];
  const own = schema.type === undefined ? [] : Array.isArray(schema.type) ? schema.type : [schema.type];
  return [...own, ...(schema.anyOf ?? []).flatMap(typesOf)];
}

/**
 * Query strings carry only text; turn each value into what the field's schema expects, and
 * leave anything unconvertible as text so validation reports it with the field's path.
 */
function fromQuery(value: unknown, schema: JsonSchema | undefined): unknown {
  const types = typesOf(schema);
  if (types.includes("array")) {
    const items = Array.isArray(value) ? value : String(value).split(",");
    return items.map((item) => fromQuery(item, schema?.items ?? schema?.anyOf?.find((s) => s.items)?.items));
  }
  if (Array.isArray(value)) return value;
  const text = String(value);
  if (text === "" && types.includes("null")) return null;
  if ((types.includes("integer") || types.includes("number")) && /^-?\d+(\.\d+)?([eE][-+]?\d+)?$/.test(text)) return Number(text);
  if (types.includes("boolean") && (text === "true" || text === "false")) return text === "true";
  return text;
}

/** Gathers the raw input object from path, query or body, and headers. */
export function rawInput(operation: Operation, request: Request): Record<string, unknown> {
  const layout = inputLayout(operation);
  const raw: Record<string, unknown> = {};
  const text = textBodyOf(operation);
  if (text) {
    // A body of text is the one field; the others come from the query string, as on a GET.
    for (const [key, value] of Object.entries(request.query)) if (key !== text.field) raw[key] = fromQuery(value, layout.properties[key]);
    raw[text.field] = typeof request.body === "string" || isLineSource(request.body) ? request.body : "";
  } else if (layout.inBody) {
    const body: unknown = request.body ?? {};
    if (typeof body !== "object" || body === null || Array.isArray(body)) throw invalid("", "expected a JSON object");
    Object.assign(raw, body);
    // Path, header and query fields cannot be smuggled in through the body.
    for (const key of [...layout.path, ...Object.keys(layout.header), ...layout.query]) if (key in raw) throw invalid(key, "unknown field");
    for (const key of layout.query) if (request.query[key] !== undefined) raw[key] = fromQuery(request.query[key], layout.properties[key]);
  } else if (operation.http.method === "GET") {
    // Credentials in the query are the route's to read, not input: they never reach a handler.
    const credentials: readonly string[] = operation.http.queryCredentials ? Object.values(QUERY_CREDENTIALS) : [];
    for (const [key, value] of Object.entries(request.query)) if (!credentials.includes(key)) raw[key] = fromQuery(value, layout.properties[key]);
  } else {
    // A change whose only fields are in the path and the query (`POST /mesh/peers/{id}/sync?anti_entropy=true`).
    for (const key of layout.query) if (request.query[key] !== undefined) raw[key] = fromQuery(request.query[key], layout.properties[key]);
  }
  for (const key of layout.path) raw[key] = request.params[key];
  for (const [key, header] of Object.entries(layout.header)) {
    const value = request.get(header);
    if (value !== undefined) raw[key] = value;
  }
  return raw;
}
