import { setTimeout as sleep } from "node:timers/promises";
import type { Logger } from "../core/log.js";
import type { Store } from "../store/store.js";

export interface ClaimLoopOptions<Row> {
  /** What is claimed, for the log ("due feeds", "due mesh links"). */
  what: string;
  tickMs: number;
  /** Runs one process keeps going at once. */
  concurrency: number;
  /** Claims up to `free` due rows by lease in the store (so no other process runs them meanwhile). */
  claim(free: number): Promise<Row[]>;
  /** The claimed row's run; it releases the lease itself when it ends. */
  run(row: Row): Promise<unknown>;
  /** What the log names a failed run by. */
  describe(row: Row): Record<string, unknown>;
}

/**
 * Background work claimed row by row from the store (CONTRACT §20, DESIGN §4a): every tick claims
 * as many due rows as there are free slots, by lease, so any number of server processes share the
 * rows and none runs twice; the schedule is the rows', so a restart neither skips nor stampedes.
 * Feed polls and mesh syncs run on it.
 */
export class ClaimLoop<Row> {
  private readonly running = new Set<Promise<void>>();
  private timer: NodeJS.Timeout | null = null;
  private ticking = false;

  constructor(
    private readonly store: Store,
    private readonly log: Logger,
    private readonly options: ClaimLoopOptions<Row>,
  ) {}

  start(): void {
    this.timer = setInterval(() => void this.tick(), this.options.tickMs);
    this.timer.unref();
  }

  /** One round: claims what is due for the free slots and starts it. */
  async tick(): Promise<void> {
    if (this.ticking || !this.store.open) return;
    const free = this.options.concurrency - this.running.size;
    if (free <= 0) return;
    this.ticking = true;
    try {
      for (const row of await this.options.claim(free)) this.begin(row);
    } catch (error) {
      if (this.store.open) this.log.error(`claiming ${this.options.what} failed`, { error });
    } finally {
      this.ticking = false;
    }
  }

  private begin(row: Row): void {
    const run = this.options
      .run(row)
      .then(() => undefined)
      .catch((error: unknown) => {
        if (this.store.open) this.log.error(`a run of ${this.options.what} failed`, { ...this.options.describe(row), error });
      })
      .finally(() => this.running.delete(run));
    this.running.add(run);
  }

  /** Stops claiming, and waits for the runs under way. */
  async stop(): Promise<void> {
    if (this.timer) clearInterval(this.timer);
    this.timer = null;
    await Promise.allSettled([...this.running]);
  }
}

/** How long a run an owner asks for ("sync now", "poll now") waits for one under way before a 409. */
const ASKED_RUN_WAIT_MS = 15_000;
const ASKED_RUN_POLL_MS = 200;

/**
 * Claims a row for a run asked for by a request: while another run holds it (the scheduler's, or
 * another request's, on any process) it waits for that one to end and claims it after, so the run
 * asked for still starts after the request and sees everything written before it. `claim` may
 * throw (the row is gone, or paused); undefined when the row stays held for `waitMs`.
 */
export async function claimWhenFree<Row>(claim: () => Promise<Row | undefined>, waitMs = ASKED_RUN_WAIT_MS): Promise<Row | undefined> {
  const deadline = Date.now() + waitMs;
  for (;;) {
    const claimed = await claim();
    if (claimed !== undefined || Date.now() >= deadline) return claimed;
    await sleep(ASKED_RUN_POLL_MS);
  }
}
