import { randomUUID } from "node:crypto";
import { parseRetryAfter, retry, type RetryOptions } from "../src/core/retry.js";
import type { ArchivistState } from "../src/wire/archivist.js";
import type { LogLevel } from "../src/wire/logs.js";

// The archivist reads the server's records with the server's own types (src/wire/), never its services.

/** A refusal from the server: its status and `{detail, code}` body. */
export class ApiError extends Error {
  constructor(
    readonly status: number,
    readonly code: string,
    readonly detail: string,
    /** The server's Retry-After, when it sent one. */
    readonly retryAfterMs?: number,
  ) {
    super(`${status} ${code}: ${detail}`);
    this.name = "ApiError";
  }
}

export type Query = Record<string, string | number | boolean | null | undefined>;

export interface ClientOptions {
  url: string;
  agentId: string;
  apiKey: string;
  /** The current lease token, sent with every write so a deposed archivist's writes are refused. */
  leaseToken?: () => number | null;
  timeoutMs?: number;
}

const RETRYABLE = new Set([429, 502, 503, 504]);
const RETRY: RetryOptions = { attempts: 4, baseMs: 500, capMs: 10_000 };

function queryString(query: Query | undefined): string {
  if (!query) return "";
  const params = new URLSearchParams();
  // null is sent as an empty value: the API's "global" for project filters.
  for (const [key, value] of Object.entries(query)) if (value !== undefined) params.set(key, value === null ? "" : String(value));
  const text = params.toString();
  return text ? `?${text}` : "";
}

function refusal(response: Response, text: string): ApiError {
  let detail = text.slice(0, 200);
  let code = "UNKNOWN";
  try {
    const parsed = JSON.parse(text) as { detail?: string; code?: string };
    detail = parsed.detail ?? detail;
    code = parsed.code ?? code;
  } catch {
    // A proxy's error page is not JSON; its first lines are the best detail there is.
  }
  return new ApiError(response.status, code, detail, parseRetryAfter(response.headers.get("retry-after")));
}

/**
 * The archivist's only way to the data: the server's HTTP API as the archivist agent. Retries
 * what the server asks to be retried (429, 503) and network failures; POSTs carry an
 * Idempotency-Key so a retry never acts twice.
 */
export class CairnClient {
  constructor(private readonly options: ClientOptions) {}

  get agentId(): string {
    return this.options.agentId;
  }

  get url(): string {
    return this.options.url;
  }

  headers(): Record<string, string> {
    return { "x-agent-id": this.options.agentId, "x-api-key": this.options.apiKey };
  }

  async request<T>(
    method: string,
    path: string,
    options: { query?: Query; body?: unknown; unfenced?: boolean; headers?: Record<string, string> } = {},
  ): Promise<{ status: number; body: T; headers: Headers }> {
    const headers: Record<string, string> = { ...this.headers(), ...options.headers };
    if (options.body !== undefined) headers["content-type"] = "application/json";
    if (method !== "GET") {
      const token = options.unfenced ? null : (this.options.leaseToken?.() ?? null);
      if (token !== null) headers["x-archivist-lease"] = String(token);
      // A caller's own key makes a POST idempotent across restarts, not only across retries.
      if (method === "POST") headers["idempotency-key"] ??= randomUUID();
    }
    const url = `${this.options.url}${path}${queryString(options.query)}`;
    const body = options.body === undefined ? undefined : JSON.stringify(options.body);
    const answer = await retry(
      async () => {
        const response = await fetch(url, { method, headers, ...(body === undefined ? {} : { body }), signal: AbortSignal.timeout(this.options.timeoutMs ?? 30_000) });
        const text = await response.text();
        if (!response.ok) throw refusal(response, text);
        return { response, text };
      },
      { ...RETRY, retryable: (error) => !(error instanceof ApiError) || RETRYABLE.has(error.status), retryAfterMs: (error) => (error instanceof ApiError ? error.retryAfterMs : undefined) },
    );
    return { status: answer.response.status, body: (answer.text ? JSON.parse(answer.text) : undefined) as T, headers: answer.response.headers };
  }

  async get<T>(path: string, query?: Query): Promise<T> {
    return (await this.request<T>("GET", path, query === undefined ? {} : { query })).body;
  }

  /** The resource, or null when the server answers 404 (gone, or never visible). */
  async find<T>(path: string, query?: Query): Promise<T | null> {
    try {
      return await this.get<T>(path, query);
    } catch (error) {
      if (error instanceof ApiError && error.status === 404) return null;
      throw error;
    }
  }

  async post<T>(path: string, body: unknown = {}): Promise<T> {
    return (await this.request<T>("POST", path, { body })).body;
  }

  async put<T>(path: string, body: unknown): Promise<T> {
    return (await this.request<T>("PUT", path, { body })).body;
  }

  async patch<T>(path: string, body: unknown): Promise<T> {
    return (await this.request<T>("PATCH", path, { body })).body;
  }

  /** Every item of a paged listing, following `X-Next-Cursor`, up to `max` items. */
  async all<T>(path: string, query: Query, max: number): Promise<T[]> {
    const items: T[] = [];
    let cursor: string | null = null;
    do {
      const page: { body: T[]; headers: Headers } = await this.request<T[]>("GET", path, {
        query: { ...query, limit: Math.min(500, max - items.length), ...(cursor === null ? {} : { cursor }) },
      });
      items.push(...page.body);
      cursor = page.headers.get("x-next-cursor");
    } while (cursor !== null && items.length < max);
    return items;
  }

  /** The archivist's own key-value store. */
  async state<T>(key: string): Promise<T | null> {
    const found = await this.find<ArchivistState>(`/archivist/state/${encodeURIComponent(key)}`);
    // The value is whatever this archivist stored under the key: the caller names its type.
    return found === null ? null : (found.value as T);
  }

  async setState(key: string, value: unknown): Promise<void> {
    await this.put(`/archivist/state/${encodeURIComponent(key)}`, { value });
  }

  /**
   * A message from the archivist; a recipient that no longer exists is not an error worth stopping
   * for. The same `idempotencyKey` within a day sends it once, however often it is asked.
   */
  async message(to: string, subject: string, body: string, idempotencyKey?: string): Promise<boolean> {
    try {
      await this.request("POST", "/messages", { body: { to, subject, body }, ...(idempotencyKey ? { headers: { "idempotency-key": idempotencyKey } } : {}) });
      return true;
    } catch (error) {
      if (error instanceof ApiError && error.status === 404) return false;
      throw error;
    }
  }

  async log(level: LogLevel, action: string, message: string, details: Record<string, unknown> = {}): Promise<void> {
    await this.post("/logs", { level, source: "archivist", action, message, details });
  }
}
