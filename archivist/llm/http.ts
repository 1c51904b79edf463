import { parseRetryAfter, retry } from "../../src/core/retry.js";
import { LlmError } from "./model.js";

export interface PostOptions {
  timeoutMs: number;
  /** Extra attempts after the first, for network errors, timeouts, 429 and 5xx. */
  retries: number;
  /** Injectable so tests need not wait out real backoff. */
  sleep?: (ms: number) => Promise<void>;
}

const BODY_EXCERPT = 200;

const retryable = (error: unknown): boolean => error instanceof LlmError && (error.status === null || error.status === 429 || error.status >= 500);

/** Names only the URL's origin and path: a query string could carry a key too. */
function where(url: string): string {
  try {
    const parsed = new URL(url);
    return `${parsed.origin}${parsed.pathname}`;
  } catch {
    return "the model endpoint";
  }
}

function describeFailure(error: unknown): string {
  if (error instanceof Error && (error.name === "TimeoutError" || error.name === "AbortError")) return "timed out";
  // fetch's own message is generic ("fetch failed"); the cause says what went wrong.
  const cause = error instanceof Error && error.cause instanceof Error ? `: ${error.cause.message}` : "";
  return `${error instanceof Error ? error.message : String(error)}${cause}`;
}

/**
 * POSTs JSON and returns the parsed JSON answer, retrying transient failures. Error messages
 * quote the status and the start of the answer but never the headers, which hold API keys.
 */
export async function postJson(url: string, headers: Record<string, string>, body: unknown, options: PostOptions): Promise<unknown> {
  const payload = JSON.stringify(body);
  const answer = await retry(
    async () => {
      let response: Response;
      try {
        response = await fetch(url, { method: "POST", headers, body: payload, signal: AbortSignal.timeout(options.timeoutMs) });
      } catch (error) {
        throw new LlmError(`request to ${where(url)} failed: ${describeFailure(error)}`, null);
      }
      let text: string;
      try {
        text = await response.text();
      } catch (error) {
        // The body can time out after the status arrived; that is a network failure too.
        throw new LlmError(`reading the answer from ${where(url)} failed: ${describeFailure(error)}`, null);
      }
      if (!response.ok) {
        throw new LlmError(`${where(url)} answered ${response.status}: ${text.slice(0, BODY_EXCERPT)}`, response.status, parseRetryAfter(response.headers.get("retry-after")));
      }
      return { status: response.status, text };
    },
    {
      attempts: options.retries + 1,
      baseMs: 500,
      capMs: 60_000,
      jitter: 0.25,
      retryable,
      retryAfterMs: (error) => (error instanceof LlmError ? error.retryAfterMs : undefined),
      ...(options.sleep ? { sleep: options.sleep } : {}),
    },
  );
  try {
    return JSON.parse(answer.text) as unknown;
  } catch {
    throw new LlmError(`${where(url)} answered ${answer.status} with a body that is not JSON: ${answer.text.slice(0, BODY_EXCERPT)}`, answer.status);
  }
}
