import { randomUUID } from "node:crypto";
import { retry, type RetryOptions } from "../src/core/retry.js";
import type { LogLevel } from "../src/wire/logs.js";
import { ApiError, fetchSend, OperationClient, type AnswerOf, type CallableName, type CallInput, type ListItemOf, type ListName, type Page, type Send, type WireRequest, type WireResponse } from "../src/client/operations.js";

// The archivist reads the server's records with the server's own types (src/wire/, and the
// operations' types through the typed client in src/client/), never its services.

export interface ClientOptions {
  url: string;
  agentId: string;
  apiKey: string;
  /** The current lease token, sent with every write so a deposed archivist's writes are refused. */
  leaseToken?: () => number | null;
  timeoutMs?: number;
}

/** What one call adds to the archivist's usual request. */
export interface CallOptions {
  /** Sent without the lease token: the lease's own requests. */
  unfenced?: boolean;
  /** Headers of this call (a chosen Idempotency-Key). */
  headers?: Record<string, string>;
}

const RETRYABLE = new Set([429, 502, 503, 504]);
const RETRY: RetryOptions = { attempts: 4, baseMs: 500, capMs: 10_000 };

/**
 * The archivist's only way to the data: the server's HTTP API as the archivist agent. Retries
 * what the server asks to be retried (429, 503) and network failures; POSTs carry an
 * Idempotency-Key so a retry never acts twice.
 */
export class CairnClient {
  private readonly fetch: Send;

  constructor(private readonly options: ClientOptions) {
    this.fetch = fetchSend(options.url, options.timeoutMs);
  }

  get agentId(): string {
    return this.options.agentId;
  }

  get url(): string {
    return this.options.url;
  }

  headers(): Record<string, string> {
    return { "x-agent-id": this.options.agentId, "x-api-key": this.options.apiKey };
  }

  /** Operation `name` with `input`, answered as its output schema says. */
  call<N extends CallableName, C extends boolean = false>(name: N, input: CallInput<N, C>, options: CallOptions = {}): Promise<AnswerOf<N, C>> {
    return this.operations(options).call(name, input);
  }

  /** The resource, or null when the server answers 404 (gone, or never visible). */
  find<N extends CallableName, C extends boolean = false>(name: N, input: CallInput<N, C>): Promise<AnswerOf<N, C> | null> {
    return this.operations().find(name, input);
  }

  /** One page of a list operation. */
  page<N extends ListName & CallableName, C extends boolean = false>(name: N, input: CallInput<N, C>): Promise<Page<ListItemOf<N, C>>> {
    return this.operations().page(name, input);
  }

  /** Every item of a list operation, following `X-Next-Cursor`, up to `max` items. */
  all<N extends ListName & CallableName, C extends boolean = false>(name: N, input: CallInput<N, C>, max: number): Promise<ListItemOf<N, C>[]> {
    return this.operations().all(name, input, max);
  }

  private operations(options: CallOptions = {}): OperationClient {
    return new OperationClient((request) => this.send(request, options));
  }

  private async send(request: WireRequest, options: CallOptions): Promise<WireResponse> {
    const headers: Record<string, string> = { ...this.headers(), ...request.headers, ...options.headers };
    if (request.method !== "GET") {
      const token = options.unfenced ? null : (this.options.leaseToken?.() ?? null);
      if (token !== null) headers["x-archivist-lease"] = String(token);
      // A caller's own key makes a POST idempotent across restarts, not only across retries.
      if (request.method === "POST") headers["idempotency-key"] ??= randomUUID();
    }
    return retry(() => this.fetch({ ...request, headers }), {
      ...RETRY,
      retryable: (error) => !(error instanceof ApiError) || RETRYABLE.has(error.status),
      retryAfterMs: (error) => (error instanceof ApiError ? error.retryAfterMs : undefined),
    });
  }

  /** The archivist's own key-value store. */
  async state<T>(key: string): Promise<T | null> {
    const found = await this.find("archivist_state_get", { key });
    // The value is whatever this archivist stored under the key: the caller names its type.
    return found === null ? null : (found.value as T);
  }

  async setState(key: string, value: unknown): Promise<void> {
    await this.call("archivist_state_put", { key, value });
  }

  /**
   * A message from the archivist; a recipient that no longer exists is not an error worth stopping
   * for. The same `idempotencyKey` within a day sends it once, however often it is asked.
   */
  async message(to: string, subject: string, body: string, idempotencyKey?: string): Promise<boolean> {
    try {
      await this.call("message_send", { to, subject, body }, idempotencyKey ? { headers: { "idempotency-key": idempotencyKey } } : {});
      return true;
    } catch (error) {
      if (error instanceof ApiError && error.status === 404) return false;
      throw error;
    }
  }

  async log(level: LogLevel, action: string, message: string, details: Record<string, unknown> = {}): Promise<void> {
    await this.call("log_write", { level, source: "archivist", action, message, details });
  }
}
