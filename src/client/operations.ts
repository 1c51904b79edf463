import type { z } from "zod";
import type { Operations } from "../../tools/catalogue.js";
import { parseRetryAfter } from "../core/retry.js";
import type { HttpMethod } from "../wire/http.js";
import type { CompactHit, CompactWriteResult } from "../wire/memory.js";
import type { CompactTask } from "../wire/tasks.js";
import type { Route } from "./route.js";
import { ROUTES } from "./routes.js";

// One way for a program of ours (the archivist, the command line, the tests) to call the API by an
// operation's name, with the operation's own schemas as the types of what goes and comes back
// (read from the catalogue as types only: no schema is loaded). Where each field travels (path,
// query, body, header) is the route table's, generated from the catalogue as the server's gateway
// reads it, so a client cannot send a field where the server does not look for it.

type OperationName = keyof Operations;

/** The operations answered by one response: a stream's answer is an event stream, read otherwise. */
export type CallableName = { [N in OperationName]: Operations[N]["kind"] extends "stream" ? never : N }[OperationName];

/** The operations that answer a page of items with `X-Next-Cursor`. */
export type ListName = { [N in OperationName]: Operations[N]["kind"] extends "list" ? N : never }[OperationName];

/** What a caller gives: the input schema's input side (defaults may be left out). */
export type InputOf<N extends OperationName> = z.input<Operations[N]["input"]>;

/** A body the server streams as text (an export) arrives whole, as a string. */
type Received<T> = T extends AsyncIterable<string> ? string : T;
type BodyOf<O> = O extends z.ZodType ? Received<z.output<O>> : undefined;

/** One item of a list, or the whole answer of any other kind, as the server's output schema shapes it. */
type ItemOf<N extends OperationName> = BodyOf<Operations[N]["output"]>;

type OutputOf<N extends OperationName> = Operations[N]["kind"] extends "list" ? ItemOf<N>[] : ItemOf<N>;

/** The short forms REST answers only when asked with `compact=true` (docs/search.md, "Budgets"). */
type Compact = CompactHit | CompactWriteResult | CompactTask;
type Full<T> = T extends readonly (infer E)[] ? Exclude<E, Compact>[] : Exclude<T, Compact>;

/** The answer to a call: without `compact: true` in its input, never a compact form. */
export type AnswerOf<N extends OperationName, C extends boolean> = C extends true ? OutputOf<N> : Full<OutputOf<N>>;

/** One item of a list's page, compact only when asked. */
export type ListItemOf<N extends OperationName, C extends boolean> = C extends true ? ItemOf<N> : Exclude<ItemOf<N>, Compact>;

/** An input, with whether it asks for compact forms kept as a type (`C`) where the operation has them. */
export type CallInput<N extends OperationName, C extends boolean> = InputOf<N> & ("compact" extends keyof InputOf<N> ? { compact?: C } : unknown);

/** A refusal from the server: its status and `{detail, code}` body. */
export class ApiError extends Error {
  constructor(
    readonly status: number,
    readonly code: string,
    readonly detail: string,
    /** The server's Retry-After, when it sent one. */
    readonly retryAfterMs?: number,
    /** The rest of the body (`errors` on a 422, `current_version` on a 412). */
    readonly body: Record<string, unknown> = {},
  ) {
    super(`${status} ${code}: ${detail}`);
    this.name = "ApiError";
  }
}

/** The ApiError a failed response's text says; a body that is not ours (a proxy's page) gives its first characters. */
export function apiErrorOf(status: number, text: string, retryAfter: string | null): ApiError {
  let parsed: Record<string, unknown> = {};
  try {
    const value: unknown = JSON.parse(text);
    if (typeof value === "object" && value !== null && !Array.isArray(value)) parsed = value as Record<string, unknown>;
  } catch {
    // A proxy's error page is not JSON; its first characters are the best detail there is.
  }
  const detail = typeof parsed.detail === "string" ? parsed.detail : text.slice(0, 200);
  const code = typeof parsed.code === "string" ? parsed.code : "UNKNOWN";
  return new ApiError(status, code, detail, parseRetryAfter(retryAfter), parsed);
}

/** An operation's request as it goes on the wire: the path holds the query string. */
export interface WireRequest {
  method: HttpMethod;
  path: string;
  headers: Record<string, string>;
  body?: string;
}

/** A scalar as text: a string as it is, a number or boolean as JavaScript writes it, anything else as JSON. */
const textOf = (value: unknown): string =>
  typeof value === "string" ? value : typeof value === "number" || typeof value === "boolean" ? String(value) : JSON.stringify(value);

/** A value as the query string carries it: lists joined by commas, null as empty (the API's "none"), as the server reads them. */
function queryValue(value: unknown): string {
  if (value === null) return "";
  return Array.isArray(value) ? value.map(queryValue).join(",") : textOf(value);
}

/** Where each of `input`'s fields goes for operation `name`, as the server's gateway gathers them. */
export function wireRequest<N extends CallableName>(name: N, input: InputOf<N>): WireRequest {
  const route: Route = ROUTES[name];
  const fields = input as Record<string, unknown>;
  let path = route.path;
  for (const key of route.params) {
    const value = fields[key];
    if (value === undefined || value === null) throw new Error(`${name}: ${key} is a path parameter and is missing`);
    path = path.replace(`:${key}`, encodeURIComponent(textOf(value)));
  }
  const headers: Record<string, string> = {};
  for (const [key, header] of Object.entries(route.headers)) if (fields[key] !== undefined) headers[header] = textOf(fields[key]);
  const query = new URLSearchParams();
  for (const key of route.query) if (fields[key] !== undefined) query.set(key, queryValue(fields[key]));
  const search = query.toString();
  const request: WireRequest = { method: route.method, path: search ? `${path}?${search}` : path, headers };
  if (route.text) {
    headers["content-type"] = route.text.mediaType;
    request.body = textOf(fields[route.text.field] ?? "");
  } else if (route.body.length > 0) {
    headers["content-type"] = "application/json";
    request.body = JSON.stringify(Object.fromEntries(route.body.filter((key) => fields[key] !== undefined).map((key) => [key, fields[key]])));
  }
  return request;
}

/** A response as the client saw it: its status, headers and text. */
export interface WireResponse {
  status: number;
  headers: Headers;
  text: string;
}

/** The answer `response` carries for an operation: JSON parsed when it is JSON, nothing for an empty body. */
function answerOf(response: WireResponse): unknown {
  if (response.text === "") return undefined;
  const type = response.headers.get("content-type") ?? "";
  return /[/+]json\b/.test(type) ? JSON.parse(response.text) : response.text;
}

/** Sends one request and answers with what came back, or throws ApiError for a refusal. */
export type Send = (request: WireRequest) => Promise<WireResponse>;

/** A Send over fetch to `baseUrl`, each request as it is given (its caller adds credentials); a refusal throws ApiError. */
export function fetchSend(baseUrl: string, timeoutMs = 30_000): Send {
  return async (request) => {
    const response = await fetch(`${baseUrl}${request.path}`, {
      method: request.method,
      headers: request.headers,
      ...(request.body === undefined ? {} : { body: request.body }),
      signal: AbortSignal.timeout(timeoutMs),
    });
    const text = await response.text();
    if (!response.ok) throw apiErrorOf(response.status, text, response.headers.get("retry-after"));
    return { status: response.status, headers: response.headers, text };
  };
}

/** A page of a list operation and the cursor of the next one (null on the last). */
export interface Page<T> {
  items: T[];
  nextCursor: string | null;
}

/**
 * Calls operations by name through `send`: `call("task_create", {title})` answers the task as
 * `task_create`'s output schema describes it. Retries, credentials and fencing are the `send`'s.
 */
export class OperationClient {
  constructor(private readonly send: Send) {}

  async call<N extends CallableName, C extends boolean = false>(name: N, input: CallInput<N, C>): Promise<AnswerOf<N, C>> {
    return answerOf(await this.send(wireRequest(name, input))) as AnswerOf<N, C>;
  }

  /** `call`, with null for a 404: the resource is gone, or was never visible to this caller. */
  async find<N extends CallableName, C extends boolean = false>(name: N, input: CallInput<N, C>): Promise<AnswerOf<N, C> | null> {
    try {
      return await this.call(name, input);
    } catch (error) {
      if (error instanceof ApiError && error.status === 404) return null;
      throw error;
    }
  }

  /** One page of a list operation. */
  async page<N extends ListName & CallableName, C extends boolean = false>(name: N, input: CallInput<N, C>): Promise<Page<ListItemOf<N, C>>> {
    const response = await this.send(wireRequest(name, input));
    return { items: (answerOf(response) ?? []) as ListItemOf<N, C>[], nextCursor: response.headers.get("x-next-cursor") };
  }

  /** Every item of a list operation, following its cursors, up to `max` items; the input's `limit`, if any, is the page's size. */
  async all<N extends ListName & CallableName, C extends boolean = false>(name: N, input: CallInput<N, C>, max: number): Promise<ListItemOf<N, C>[]> {
    const items: ListItemOf<N, C>[] = [];
    const asked = (input as { limit?: unknown }).limit;
    const pageSize = typeof asked === "number" ? asked : 500;
    let cursor: string | null = null;
    do {
      const limit = Math.min(pageSize, max - items.length);
      // The same input with the page's limit and cursor, which every list operation takes.
      const next = { ...input, limit, ...(cursor === null ? {} : { cursor }) } as CallInput<N, C>;
      const page: Page<ListItemOf<N, C>> = await this.page(name, next);
      items.push(...page.items);
      cursor = page.nextCursor;
    } while (cursor !== null && items.length < max);
    return items;
  }
}
