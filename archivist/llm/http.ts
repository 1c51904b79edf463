import { LlmError } from "./model.js";

export interface PostOptions {
  timeoutMs: number;
  /** Extra attempts after the first, for network errors, timeouts, 429 and 5xx. */
  retries: number;
  /** Injectable so tests need not wait out real backoff. */
  sleep?: (ms: number) => Promise<void>;
}

const MAX_RETRY_AFTER_MS = 60_000;
const BASE_BACKOFF_MS = 500;
const MAX_JITTER_MS = 250;
const BODY_EXCERPT = 200;

const realSleep = (ms: number): Promise<void> => new Promise((resolve) => setTimeout(resolve, ms));

function retryable(status: number): boolean {
  return status === 429 || status >= 500;
}

function backoffMs(attempt: number, retryAfter: string | null): number {
  if (retryAfter !== null && retryAfter.trim() !== "") {
    const seconds = Number(retryAfter);
    if (Number.isFinite(seconds) && seconds >= 0) return Math.min(seconds * 1000, MAX_RETRY_AFTER_MS);
  }
  return BASE_BACKOFF_MS * 2 ** attempt + Math.random() * MAX_JITTER_MS;
}

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
  const sleep = options.sleep ?? realSleep;
  const payload = JSON.stringify(body);
  for (let attempt = 0; ; attempt++) {
    const last = attempt >= options.retries;
    let response: Response;
    try {
      response = await fetch(url, { method: "POST", headers, body: payload, signal: AbortSignal.timeout(options.timeoutMs) });
    } catch (error) {
      if (last) throw new LlmError(`request to ${where(url)} failed: ${describeFailure(error)}`, null);
      await sleep(backoffMs(attempt, null));
      continue;
    }

    let text: string;
    try {
      text = await response.text();
    } catch (error) {
      // The body can time out after the status arrived; treat it like a network failure.
      if (last) throw new LlmError(`reading the answer from ${where(url)} failed: ${describeFailure(error)}`, null);
      await sleep(backoffMs(attempt, null));
      continue;
    }

    if (response.ok) {
      try {
        return JSON.parse(text) as unknown;
      } catch {
        throw new LlmError(`${where(url)} answered ${response.status} with a body that is not JSON: ${text.slice(0, BODY_EXCERPT)}`, response.status);
      }
    }
    if (!retryable(response.status) || last) {
      throw new LlmError(`${where(url)} answered ${response.status}: ${text.slice(0, BODY_EXCERPT)}`, response.status);
    }
    await sleep(backoffMs(attempt, response.headers.get("retry-after")));
  }
}
