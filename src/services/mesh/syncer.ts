import { randomUUID } from "node:crypto";
import type { Logger } from "../../core/log.js";
import { addSeconds, now } from "../../core/time.js";
import type { MeshLinkRow } from "../../store/mesh.js";
import type { Store } from "../../store/store.js";
import { SYNC_LEASE_SECONDS } from "./schedule.js";
import type { MeshSync } from "./sync.js";

/** Links one server process syncs at once. */
export const MAX_CONCURRENT_SYNCS = 2;

/**
 * Syncs links when they are due. Each round claims at most as many due links as it has free
 * slots, by lease in the store, so any number of server processes share the links and each link
 * is synced by one at a time; the schedule lives in the store, so a restart neither skips nor
 * stampedes.
 */
export class MeshSyncer {
  readonly holder = `mesh:${randomUUID()}`;
  private readonly running = new Set<Promise<void>>();
  private timer: NodeJS.Timeout | null = null;
  private ticking = false;

  constructor(
    private readonly store: Store,
    private readonly sync: MeshSync,
    private readonly log: Logger,
    private readonly tickMs: number,
  ) {}

  start(): void {
    this.timer = setInterval(() => void this.tick(), this.tickMs);
    this.timer.unref();
  }

  async tick(): Promise<void> {
    if (this.ticking || !this.store.open) return;
    const free = MAX_CONCURRENT_SYNCS - this.running.size;
    if (free <= 0) return;
    this.ticking = true;
    try {
      const at = now();
      const claimed = await this.store.transaction((tx) => this.store.mesh.claimDueLinks(tx, at, this.holder, addSeconds(at, SYNC_LEASE_SECONDS), free));
      for (const link of claimed) this.begin(link);
    } catch (error) {
      if (this.store.open) this.log.error("claiming due mesh links failed", { error });
    } finally {
      this.ticking = false;
    }
  }

  private begin(link: MeshLinkRow): void {
    const run = this.sync
      .run(link, this.holder, { asked: false })
      .then(() => undefined)
      .catch((error: unknown) => {
        if (this.store.open) this.log.error("mesh sync failed", { link_id: link.id, error });
      })
      .finally(() => this.running.delete(run));
    this.running.add(run);
  }

  async stop(): Promise<void> {
    if (this.timer) clearInterval(this.timer);
    this.timer = null;
    await Promise.allSettled([...this.running]);
  }
}
