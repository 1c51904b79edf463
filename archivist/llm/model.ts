/** One prompt for the model: the archivist always sends a system text and a single user turn. */
export interface CompletionRequest {
  system: string;
  user: string;
  maxTokens: number;
}

export interface Completion {
  text: string;
  promptTokens: number;
  completionTokens: number;
}

/** Where and how a provider is called. */
export interface ModelOptions {
  /** Without a trailing slash. */
  baseUrl: string;
  model: string;
  apiKey?: string | undefined;
  timeoutMs: number;
  retries?: number;
}

/** Retries after a 429 or 5xx, with backoff. */
export const DEFAULT_RETRIES = 2;

export interface LanguageModel {
  readonly provider: "openai" | "anthropic";
  readonly model: string;
  complete(request: CompletionRequest): Promise<Completion>;
}

/**
 * A failed model call. `status` is the HTTP status of an error answer, or null when there is
 * none to blame (network error, timeout, or a success answer of the wrong shape).
 */
export class LlmError extends Error {
  constructor(
    message: string,
    readonly status: number | null,
    /** The provider's Retry-After, when it sent one. */
    readonly retryAfterMs?: number,
  ) {
    super(message);
    this.name = "LlmError";
  }
}

/** The hourly token budget cannot cover a call; raised before anything is sent. */
export class BudgetExhausted extends Error {
  constructor(message = "the hourly token budget is exhausted") {
    super(message);
    this.name = "BudgetExhausted";
  }
}

/** Rough token estimate: ceil(chars / 4). Good enough for budgeting, not for billing. */
export function estimateTokens(text: string): number {
  return Math.ceil(text.length / 4);
}
