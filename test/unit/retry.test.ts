import { describe, expect, it } from "vitest";
import { backoffDelay, parseRetryAfter, retry, type RetryOptions } from "../../src/core/retry.js";

/** A retry whose waits are recorded instead of waited out. */
function recorded(options: Partial<RetryOptions> = {}): { options: RetryOptions; waits: number[] } {
  const waits: number[] = [];
  return {
    waits,
    options: {
      attempts: 4,
      baseMs: 100,
      capMs: 1000,
      sleep: (ms) => {
        waits.push(ms);
        return Promise.resolve();
      },
      ...options,
    },
  };
}

/** An attempt that fails with each of `failures` in turn (a message becomes an Error), then resolves to "done". */
function failingWith(...failures: (Error | string)[]): { attempt: () => Promise<string>; calls: () => number } {
  let calls = 0;
  return {
    calls: () => calls,
    attempt: () => {
      const failure = failures[calls++];
      if (failure === undefined) return Promise.resolve("done");
      return Promise.reject(typeof failure === "string" ? new Error(failure) : failure);
    },
  };
}

class Refused extends Error {
  constructor(
    readonly status: number,
    readonly retryAfterMs?: number,
  ) {
    super(`refused with ${status}`);
  }
}

describe("the backoff delay", () => {
  it.each([
    { case: "the base after the first failure", failures: 1, jitter: 0, random: 0.5, ms: 100 },
    { case: "doubled after the second", failures: 2, jitter: 0, random: 0.5, ms: 200 },
    { case: "doubled again after the third", failures: 3, jitter: 0, random: 0.5, ms: 400 },
    { case: "the cap once doubling passes it", failures: 5, jitter: 0, random: 0.5, ms: 1000 },
    { case: "the cap however many failures", failures: 5000, jitter: 0, random: 0.5, ms: 1000 },
    { case: "no jitter added when the draw is 0", failures: 2, jitter: 0.5, random: 0, ms: 200 },
    { case: "up to the jitter's fraction added", failures: 2, jitter: 0.5, random: 1, ms: 300 },
    { case: "the cap, jitter included", failures: 4, jitter: 0.5, random: 1, ms: 1000 },
  ])("is $case", ({ failures, jitter, random, ms }) => {
    expect(backoffDelay({ baseMs: 100, capMs: 1000, jitter }, failures, () => random)).toBe(ms);
  });
});

describe("the Retry-After header", () => {
  const now = Date.parse("2026-11-20T12:00:00Z");
  it.each([
    { header: null, ms: undefined },
    { header: "", ms: undefined },
    { header: "0", ms: 0 },
    { header: " 3 ", ms: 3000 },
    { header: "1.5", ms: 1500 },
    { header: "Fri, 20 Nov 2026 12:00:10 GMT", ms: 10_000 },
    { header: "Fri, 20 Nov 2026 11:00:00 GMT", ms: 0 },
    { header: "-1", ms: undefined },
    { header: "soon", ms: undefined },
  ])("reads $header as $ms ms", ({ header, ms }) => {
    expect(parseRetryAfter(header, now)).toBe(ms);
  });
});

describe("retry", () => {
  it("returns the first success without waiting", async () => {
    const { options, waits } = recorded();
    const { attempt, calls } = failingWith();
    expect(await retry(attempt, options)).toBe("done");
    expect(calls()).toBe(1);
    expect(waits).toEqual([]);
  });

  it("retries failures with a doubling wait until one succeeds", async () => {
    const { options, waits } = recorded();
    const { attempt, calls } = failingWith("down", "down", "down");
    expect(await retry(attempt, options)).toBe("done");
    expect(calls()).toBe(4);
    expect(waits).toEqual([100, 200, 400]);
  });

  it("rethrows the last failure, as it was, when the attempts run out", async () => {
    const { options, waits } = recorded({ attempts: 3 });
    const last = new Refused(503);
    const { attempt, calls } = failingWith(new Refused(503), new Refused(502), last);
    await expect(retry(attempt, options)).rejects.toBe(last);
    expect(calls()).toBe(3);
    expect(waits).toEqual([100, 200]);
  });

  it("rethrows at once a failure that is not retryable", async () => {
    const { options, waits } = recorded({ retryable: (error) => !(error instanceof Refused) || error.status >= 500 });
    const refused = new Refused(400);
    const { attempt, calls } = failingWith(new Refused(503), refused);
    await expect(retry(attempt, options)).rejects.toBe(refused);
    expect(calls()).toBe(2);
    expect(waits).toEqual([100]);
  });

  it("waits what the other side asked for instead of the backoff, but never past the cap", async () => {
    const { options, waits } = recorded({ retryAfterMs: (error) => (error instanceof Refused ? error.retryAfterMs : undefined) });
    const { attempt } = failingWith(new Refused(429, 0), new Refused(429, 60_000), new Refused(503));
    expect(await retry(attempt, options)).toBe("done");
    expect(waits).toEqual([0, 1000, 400]);
  });

  it("tells onRetry of each failure it will retry, with the wait", async () => {
    const heard: [string, number, number][] = [];
    const { options } = recorded({ attempts: 2, onRetry: (error, delayMs, failures) => heard.push([(error as Error).message, delayMs, failures]) });
    const { attempt } = failingWith("first", "second");
    await expect(retry(attempt, options)).rejects.toThrow("second");
    expect(heard).toEqual([["first", 100, 1]]);
  });

  it("keeps trying with Infinity attempts", async () => {
    const { options, waits } = recorded({ attempts: Infinity });
    const { attempt, calls } = failingWith(...Array.from({ length: 12 }, () => "down"));
    expect(await retry(attempt, options)).toBe("done");
    expect(calls()).toBe(13);
    expect(waits.at(-1)).toBe(1000);
  });

  it("stops waiting when its signal aborts, rejecting with the signal's reason", async () => {
    const controller = new AbortController();
    const reason = new Error("shutting down");
    const { attempt, calls } = failingWith("down", "down");
    // The real sleep: an abort ends it at once, so nothing here waits out the hour.
    const retrying = retry(attempt, { attempts: Infinity, baseMs: 3_600_000, capMs: 3_600_000, signal: controller.signal, onRetry: () => controller.abort(reason) });
    await expect(retrying).rejects.toBe(reason);
    expect(calls()).toBe(1);
  });

  it("does not start when its signal has already aborted", async () => {
    const controller = new AbortController();
    controller.abort(new Error("too late"));
    const { attempt, calls } = failingWith();
    await expect(retry(attempt, { attempts: 3, baseMs: 1, capMs: 1, signal: controller.signal })).rejects.toThrow("too late");
    expect(calls()).toBe(0);
  });
});
