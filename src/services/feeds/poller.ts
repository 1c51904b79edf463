import { randomUUID } from "node:crypto";
import type { Logger } from "../../core/log.js";
import { addSeconds, now } from "../../core/time.js";
import type { FeedRow } from "../../store/feeds.js";
import type { Store } from "../../store/store.js";
import { ClaimLoop } from "../claim-loop.js";
import type { FeedPolls } from "./polls.js";
import { POLL_LEASE_SECONDS } from "./service.js";

/** Fetches one server process runs at once. */
const MAX_CONCURRENT_POLLS = 4;

/**
 * Polls subscriptions when they are due: each round claims at most as many due feeds as it has
 * free fetches, by lease in the store, so several server processes share the feeds and none is
 * polled twice.
 */
export class FeedPoller extends ClaimLoop<FeedRow> {
  constructor(store: Store, polls: FeedPolls, log: Logger, tickMs: number) {
    const holder = `poller:${randomUUID()}`;
    super(store, log, {
      what: "due feeds",
      tickMs,
      concurrency: MAX_CONCURRENT_POLLS,
      claim: (free) => {
        const at = now();
        return store.transaction((tx) => store.feeds.claimDue(tx, at, holder, addSeconds(at, POLL_LEASE_SECONDS), free));
      },
      run: (row) => polls.run(row, holder),
      describe: (row) => ({ feed_id: row.id }),
    });
  }
}
