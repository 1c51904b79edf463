import { randomUUID } from "node:crypto";
import type { Logger } from "../../core/log.js";
import { addSeconds, now } from "../../core/time.js";
import type { MeshLinkRow } from "../../store/mesh.js";
import type { Store } from "../../store/store.js";
import { ClaimLoop } from "../claim-loop.js";
import { SYNC_LEASE_SECONDS } from "./schedule.js";
import type { MeshSync } from "./sync.js";

/** Links one server process syncs at once. */
const MAX_CONCURRENT_SYNCS = 2;

/**
 * Syncs links when they are due: each round claims at most as many due links as it has free
 * slots, by lease in the store, so any number of server processes share the links and each link
 * is synced by one at a time.
 */
export class MeshSyncer extends ClaimLoop<MeshLinkRow> {
  constructor(store: Store, sync: MeshSync, log: Logger, tickMs: number) {
    const holder = `mesh:${randomUUID()}`;
    super(store, log, {
      what: "due mesh links",
      tickMs,
      concurrency: MAX_CONCURRENT_SYNCS,
      claim: (free) => {
        const at = now();
        return store.transaction((tx) => store.mesh.claimDueLinks(tx, at, holder, addSeconds(at, SYNC_LEASE_SECONDS), free));
      },
      run: (link) => sync.run(link, holder, { asked: false }),
      describe: (link) => ({ link_id: link.id }),
    });
  }
}
