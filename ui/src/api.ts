// The one way the UI talks to the server: same-origin fetch with the session cookie, JSON in and
// out, every failure turned into an ApiError whose `detail` can be shown as it is.

export class ApiError extends Error {
  constructor(
    readonly status: number,
    readonly code: string,
    readonly detail: string,
    readonly body: Record<string, unknown> = {},
  ) {
    super(detail);
    this.name = "ApiError";
  }
}

export interface ApiResponse<T> {
  data: T;
  status: number;
  headers: Headers;
  /** The `X-Next-Cursor` header: more rows exist when it is set. */
  nextCursor: string | null;
}

export interface RequestOptions {
  method?: "GET" | "POST" | "PATCH" | "PUT" | "DELETE";
  body?: unknown;
  headers?: Record<string, string>;
  signal?: AbortSignal;
  /** Whether a 401 ends the session (false only for the login call itself). */
  endsSession?: boolean;
}

type SessionEndedListener = () => void;
const sessionEndedListeners = new Set<SessionEndedListener>();

/** Called whenever the server answers 401: the cookie is gone or expired. */
export function onSessionEnded(listener: SessionEndedListener): () => void {
  sessionEndedListeners.add(listener);
  return () => sessionEndedListeners.delete(listener);
}

export function notifySessionEnded(): void {
  for (const listener of sessionEndedListeners) listener();
}

export type QueryValue = string | number | boolean | null | undefined;

/** `?a=1&b=x` from the defined values; `null` becomes an empty value (the API's "global"). */
export function query(params: Record<string, QueryValue>): string {
  const search = new URLSearchParams();
  for (const [key, value] of Object.entries(params)) {
    if (value === undefined) continue;
    search.set(key, value === null ? "" : String(value));
  }
  const text = search.toString();
  return text ? `?${text}` : "";
}

function errorFromBody(status: number, statusText: string, body: unknown): ApiError {
  if (body && typeof body === "object") {
    const record = body as Record<string, unknown>;
    const detail = typeof record.detail === "string" ? record.detail : undefined;
    const code = typeof record.code === "string" ? record.code : "HTTP_" + String(status);
    if (detail) {
      // A field error that only repeats the detail (`not a feed: …` on `url`) adds nothing to it.
      const errors = Array.isArray(record.errors) ? (record.errors as { path?: unknown; message?: unknown }[]).filter((error) => error.message !== detail) : [];
      const specifics = errors
        .map((error) => [error.path, error.message].filter((part) => typeof part === "string" && part !== "").join(": "))
        .filter((text) => text !== "");
      return new ApiError(status, code, specifics.length ? `${detail} (${specifics.join("; ")})` : detail, record);
    }
  }
  return new ApiError(status, "HTTP_" + String(status), `the server answered ${status}${statusText ? ` ${statusText}` : ""}`);
}

export async function request<T>(path: string, options: RequestOptions = {}): Promise<ApiResponse<T>> {
  const headers: Record<string, string> = { accept: "application/json", ...options.headers };
  const init: RequestInit = { method: options.method ?? "GET", credentials: "same-origin", headers };
  if (options.body !== undefined) {
    headers["content-type"] = "application/json";
    init.body = JSON.stringify(options.body);
  }
  if (options.signal) init.signal = options.signal;
  let response: Response;
  try {
    response = await fetch(path, init);
  } catch (error) {
    if (error instanceof DOMException && error.name === "AbortError") throw error;
    throw new ApiError(0, "NETWORK", "the server could not be reached; check that Cairn is running");
  }
  const text = await response.text();
  let body: unknown = undefined;
  if (text) {
    try {
      body = JSON.parse(text);
    } catch {
      body = text;
    }
  }
  if (!response.ok) {
    const error = errorFromBody(response.status, response.statusText, body);
    if (response.status === 401 && options.endsSession !== false) notifySessionEnded();
    throw error;
  }
  return { data: body as T, status: response.status, headers: response.headers, nextCursor: response.headers.get("x-next-cursor") };
}

export const api = {
  get: <T>(path: string, options: Omit<RequestOptions, "method" | "body"> = {}) => request<T>(path, options),
  post: <T>(path: string, body: unknown = {}, options: Omit<RequestOptions, "method" | "body"> = {}) =>
    request<T>(path, { ...options, method: "POST", body }),
  patch: <T>(path: string, body: unknown, options: Omit<RequestOptions, "method" | "body"> = {}) =>
    request<T>(path, { ...options, method: "PATCH", body }),
  delete: <T = undefined>(path: string, options: Omit<RequestOptions, "method"> = {}) => request<T>(path, { ...options, method: "DELETE" }),
};

/** Follows `X-Next-Cursor` until the list ends or `maxRows` rows were read. */
export async function fetchAll<T>(path: string, params: Record<string, QueryValue> = {}, maxRows = 2000): Promise<{ rows: T[]; complete: boolean }> {
  const rows: T[] = [];
  let cursor: string | undefined;
  for (;;) {
    const page = await api.get<T[]>(path + query({ ...params, limit: 500, cursor }));
    rows.push(...page.data);
    if (!page.nextCursor) return { rows, complete: true };
    if (rows.length >= maxRows) return { rows, complete: false };
    cursor = page.nextCursor;
  }
}

export const encode = encodeURIComponent;

export function errorText(error: unknown): string {
  if (error instanceof ApiError) return error.detail;
  if (error instanceof Error) return error.message;
  return String(error);
}
