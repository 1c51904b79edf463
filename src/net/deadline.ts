import { OutboundFailure } from "./errors.js";

interface Destroyable {
  destroy(error?: Error): unknown;
}

/**
 * One clock for a whole call — resolving, connecting, every redirect and the body — so a server
 * that answers each step just in time still cannot hold a call past its limit. On expiry it
 * destroys whatever the call is waiting on (the request, then the response) with the failure.
 */
export class Deadline {
  private readonly timer: NodeJS.Timeout;
  private readonly onCallerAbort: (() => void) | undefined;
  private failure: OutboundFailure | null = null;
  private current: Destroyable | null = null;
  private readonly waiting = new Set<(failure: OutboundFailure) => void>();

  /** The URL the call is at; a failure names it. */
  url: URL;

  constructor(
    url: URL,
    timeoutMs: number,
    private readonly signal?: AbortSignal,
  ) {
    this.url = url;
    this.timer = setTimeout(() => this.expire("timeout", `timed out after ${timeoutMs} ms`), timeoutMs);
    if (signal) {
      this.onCallerAbort = () => this.expire("aborted", "cancelled by the caller");
      if (signal.aborted) this.onCallerAbort();
      else signal.addEventListener("abort", this.onCallerAbort, { once: true });
    }
  }

  /** The failure, once the time is up or the caller cancelled. */
  get reason(): OutboundFailure | null {
    return this.failure;
  }

  /** What the call waits on now: destroyed with the failure when it comes. */
  guard(target: Destroyable): void {
    if (this.failure) target.destroy(this.failure);
    else this.current = target;
  }

  /** A step that holds no socket (resolving a name), given up when the time is up. */
  race<T>(step: Promise<T>): Promise<T> {
    if (this.failure) return Promise.reject(this.failure);
    return new Promise<T>((resolve, reject) => {
      this.waiting.add(reject);
      step.then(
        (value) => {
          this.waiting.delete(reject);
          resolve(value);
        },
        (error: unknown) => {
          this.waiting.delete(reject);
          reject(error instanceof Error ? error : new Error(String(error)));
        },
      );
    });
  }

  /** The call is over (answered, failed or its body consumed): the clock stops. */
  clear(): void {
    clearTimeout(this.timer);
    if (this.onCallerAbort) this.signal?.removeEventListener("abort", this.onCallerAbort);
    this.current = null;
    this.waiting.clear();
  }

  private expire(kind: "timeout" | "aborted", what: string): void {
    if (this.failure) return;
    this.failure = new OutboundFailure(kind, this.url, what);
    this.current?.destroy(this.failure);
    for (const reject of this.waiting) reject(this.failure);
    this.clear();
  }
}
