import { randomUUID } from "node:crypto";
import type { Logger } from "../../core/log.js";
import { addSeconds, now } from "../../core/time.js";
import type { FeedRow } from "../../store/feeds.js";
import type { Store } from "../../store/store.js";
import type { FeedPolls } from "./polls.js";
import { POLL_LEASE_SECONDS } from "./service.js";

/** Fetches one server process runs at once. */
export const MAX_CONCURRENT_POLLS = 4;

/**
 * Polls subscriptions when they are due. Every round claims at most as many due feeds as it has
 * free fetches, by lease in the store, so several server processes share the feeds and none is
 * polled twice; the schedule (`next_poll_at`) is in the store too, so a restart neither skips a
 * poll nor makes every feed due at once.
 */
export class FeedPoller {
  private readonly holder = `poller:${randomUUID()}`;
  private readonly running = new Set<Promise<void>>();
  private timer: NodeJS.Timeout | null = null;
  private ticking = false;

  constructor(
    private readonly store: Store,
    private readonly polls: FeedPolls,
    private readonly log: Logger,
    private readonly tickMs: number,
  ) {}

  start(): void {
    this.timer = setInterval(() => void this.tick(), this.tickMs);
    this.timer.unref();
  }

  /** One round: claims what is due for the free fetches and starts them. */
  async tick(): Promise<void> {
    if (this.ticking || !this.store.open) return;
    const free = MAX_CONCURRENT_POLLS - this.running.size;
    if (free <= 0) return;
    this.ticking = true;
    try {
      const at = now();
      const claimed = await this.store.transaction((tx) => this.store.feeds.claimDue(tx, at, this.holder, addSeconds(at, POLL_LEASE_SECONDS), free));
      for (const row of claimed) this.startPoll(row);
    } catch (error) {
      if (this.store.open) this.log.error("claiming due feeds failed", { error });
    } finally {
      this.ticking = false;
    }
  }

  private startPoll(row: FeedRow): void {
    const poll = this.polls
      .run(row, this.holder)
      .then(() => undefined)
      .catch((error: unknown) => {
        if (this.store.open) this.log.error("feed poll failed", { feed_id: row.id, error });
      })
      .finally(() => this.running.delete(poll));
    this.running.add(poll);
  }

  /** Stops claiming, and waits for the polls under way. */
  async stop(): Promise<void> {
    if (this.timer) clearInterval(this.timer);
    this.timer = null;
    await Promise.allSettled([...this.running]);
  }
}
