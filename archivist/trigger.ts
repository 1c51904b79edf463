import { setTimeout as sleep } from "node:timers/promises";

/**
 * Work started by events on a stream: `request()` runs `work()` after a short debounce, never two
 * at once (a request while it runs asks for one more round), and `stop()` ends the stream and
 * lets a running round finish for a grace period. Capture digestion and compile grounding both
 * run this way; each says what it reads and what a round does.
 */
export abstract class StreamTrigger {
  protected readonly abort = new AbortController();
  protected stopped = false;
  /** Set when a request came while a round ran: `work()` loops while it is set. */
  protected again = false;
  private reading: Promise<void> | null = null;
  private working: Promise<void> | null = null;
  private timer: NodeJS.Timeout | null = null;

  constructor(private readonly debounceMs: number) {}

  /** Reads the stream until `abort` fires. */
  protected abstract follow(): Promise<void>;
  /** One round of work; loops itself while `again` is set. */
  protected abstract work(): Promise<void>;

  start(): void {
    this.reading = this.follow();
  }

  request(delayMs = this.debounceMs): void {
    if (this.stopped || this.timer) return;
    this.timer = setTimeout(() => {
      this.timer = null;
      if (this.working) this.again = true;
      else
        this.working = this.work().finally(() => {
          this.working = null;
        });
    }, delayMs);
  }

  /** Stops reading and lets a running round finish (up to `graceMs`). */
  async stop(graceMs: number): Promise<void> {
    this.stopped = true;
    this.abort.abort();
    if (this.timer) clearTimeout(this.timer);
    this.timer = null;
    await this.reading;
    const grace = new AbortController();
    await Promise.race([this.working ?? Promise.resolve(), sleep(graceMs, undefined, { signal: grace.signal }).catch(() => undefined)]);
    grace.abort();
  }
}
