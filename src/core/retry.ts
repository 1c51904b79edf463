import { setTimeout as sleepFor } from "node:timers/promises";

/** Exponential backoff: `baseMs` after the first failure, doubling after each further one, up to `capMs`. */
export interface Backoff {
  baseMs: number;
  /** No wait is longer, not even one a server asks for with Retry-After. */
  capMs: number;
  /** Up to this fraction of each wait is added at random, so clients that failed together retry apart. */
  jitter?: number;
}

/** The wait after `failures` failures in a row (1 after the first). */
export function backoffDelay(policy: Backoff, failures: number, random: () => number = Math.random): number {
  const doubled = policy.baseMs * 2 ** Math.max(0, failures - 1);
  return Math.min(policy.capMs, doubled * (1 + (policy.jitter ?? 0) * random()));
}

export interface RetryOptions extends Backoff {
  /** Tries in all, the first included; `Infinity` keeps trying until `signal` aborts. */
  attempts: number;
  /** Whether a failure is worth another try; without it every failure is. */
  retryable?: (error: unknown) => boolean;
  /** The wait the other side asked for (an HTTP Retry-After), taken instead of the backoff. */
  retryAfterMs?: (error: unknown) => number | undefined;
  /** Hears each failure that will be retried, with the wait before the next try. */
  onRetry?: (error: unknown, delayMs: number, failures: number) => void;
  /** Ends the waiting: the retry then rejects with the signal's reason. */
  signal?: AbortSignal;
  /** Injectable so a test need not wait out the backoff. */
  sleep?: (ms: number, signal?: AbortSignal) => Promise<void>;
  random?: () => number;
}

const realSleep = (ms: number, signal?: AbortSignal): Promise<void> => sleepFor(ms, undefined, { signal });

/**
 * Runs `attempt` until it resolves, a failure is not retryable, or the attempts run out; the last
 * failure is rethrown as it was.
 */
export async function retry<T>(attempt: () => Promise<T>, options: RetryOptions): Promise<T> {
  const sleep = options.sleep ?? realSleep;
  for (let failures = 1; ; failures++) {
    options.signal?.throwIfAborted();
    try {
      return await attempt();
    } catch (error) {
      if (failures >= options.attempts || options.signal?.aborted || !(options.retryable?.(error) ?? true)) throw error;
      const asked = options.retryAfterMs?.(error);
      const delayMs = asked === undefined ? backoffDelay(options, failures, options.random) : Math.min(asked, options.capMs);
      options.onRetry?.(error, delayMs, failures);
      try {
        await sleep(delayMs, options.signal);
      } catch (interrupted) {
        // The signal's reason, as before a try, rather than the AbortError timers/promises rejects with.
        options.signal?.throwIfAborted();
        throw interrupted;
      }
    }
  }
}

/** An HTTP Retry-After (seconds, or a date) in milliseconds; undefined when absent or unreadable. */
export function parseRetryAfter(header: string | null, now: number = Date.now()): number | undefined {
  const text = header?.trim() ?? "";
  if (text === "") return undefined;
  if (/^\d+(\.\d+)?$/.test(text)) return Number(text) * 1000;
  // An HTTP date names its day and month; without that test Date.parse would read "-1" as a year.
  const at = /[a-z]/i.test(text) ? Date.parse(text) : Number.NaN;
  return Number.isNaN(at) ? undefined : Math.max(0, at - now);
}
