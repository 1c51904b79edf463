import { z } from "zod";
import type { Operation } from "./operation.js";

export interface JsonSchema {
  type?: string | string[];
  anyOf?: JsonSchema[];
  properties?: Record<string, JsonSchema>;
  required?: string[];
  items?: JsonSchema;
  [keyword: string]: unknown;
}

/** Where each input field of an operation comes from on the wire. */
export interface InputLayout {
  path: string[];
  header: Record<string, string>;
  /** Fields read from the query string on a route whose other fields are in the body. */
  query: string[];
  /** Fields read from the query string (GET) or the JSON body (everything else). */
  rest: string[];
  inBody: boolean;
  properties: Record<string, JsonSchema>;
  required: string[];
}

const layouts = new WeakMap<Operation, InputLayout>();

export function inputLayout(operation: Operation): InputLayout {
  const cached = layouts.get(operation);
  if (cached) return cached;
  const schema = z.toJSONSchema(operation.input, { io: "input", unrepresentable: "any" }) as JsonSchema;
  const properties = schema.properties ?? {};
  const path = [...operation.http.path.matchAll(/:([a-z_]+)/g)].map((match) => match[1] as string);
  const header = (operation.http.headers ?? {}) as Record<string, string>;
  const query = [...((operation.http.query ?? []) as string[])];
  const rest = Object.keys(properties).filter((key) => !path.includes(key) && !(key in header) && !query.includes(key));
  const inBody = operation.http.method !== "GET" && rest.length > 0;
  const layout = { path, header, query, rest, inBody, properties, required: schema.required ?? [] };
  layouts.set(operation, layout);
  return layout;
}

/**
 * An operation whose request body is a file of text rather than a JSON object (the import's JSON
 * Lines) says so with one input field whose schema names a `contentMediaType`: that field is the
 * body, and its other fields come from the query string.
 */
export interface TextBody {
  field: string;
  mediaType: string;
}

export function textBodyOf(operation: Operation): TextBody | undefined {
  if (operation.http.method === "GET") return undefined;
  for (const [field, schema] of Object.entries(inputLayout(operation).properties)) {
    if (typeof schema.contentMediaType === "string") return { field, mediaType: schema.contentMediaType };
  }
  return undefined;
}
