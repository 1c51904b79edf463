import { randomUUID } from "node:crypto";
import { conflict, forbidden, notFound } from "../../core/errors.js";
import { parseIdRef } from "../../core/ids.js";
import { addSeconds, now } from "../../core/time.js";
import type { Store } from "../../store/store.js";
import type { MeshSyncResult } from "../../wire/mesh.js";
import type { Caller } from "../caller.js";
import { claimWhenFree } from "../claim-loop.js";
import type { MemoryWrites } from "../memory-writes.js";
import type { CopyWrites } from "./copy-writes.js";
import { isCopy } from "./copies.js";
import { SYNC_LEASE_SECONDS } from "./schedule.js";
import type { MeshSync } from "./sync.js";

/** What the owner asks of syncing: a sync now, and hiding a copy here. */
export class MeshSyncService {
  constructor(
    private readonly store: Store,
    private readonly sync: MeshSync,
    private readonly writes: MemoryWrites,
    private readonly copies: CopyWrites,
  ) {}

  /**
   * Syncs the link now (anti-entropy too when asked), after any sync under way has ended; 409 when
   * the link is paused or another sync still holds it after a wait, 502 when the peer fails.
   */
  async syncNow(linkId: string, antiEntropy: boolean): Promise<MeshSyncResult & { bytes: number }> {
    const holder = `mesh-request:${randomUUID()}`;
    const claimed = await claimWhenFree(async () => {
      const link = await this.store.mesh.linkById(this.store.reader, linkId);
      if (!link) throw notFound("mesh link");
      if (link.paused) throw conflict("the link is paused; resume it first");
      const at = now();
      return this.store.transaction((tx) => this.store.mesh.claimLink(tx, link.pk, at, holder, addSeconds(at, SYNC_LEASE_SECONDS)));
    });
    if (!claimed) throw conflict("a sync of this link is still under way; try again when it has finished");
    return this.sync.run(claimed, holder, { asked: true, antiEntropy });
  }

  /**
   * Hides a peer's copy here (CONTRACT §16): deleted here at the origin's version, not imported
   * again at that version or a lower one, not passed on to other peers. Only copies: an entry
   * written here is deleted, not suppressed.
   */
  async suppress(caller: Caller, ref: string): Promise<void> {
    await this.store.transaction(async (tx) => {
      const row = await this.writes.find(tx, { agentId: caller.agentId, allProjects: true }, parseIdRef(ref));
      if (!row) throw notFound("memory entry");
      if (!isCopy(row)) throw forbidden("only a peer's copy can be suppressed; delete an entry written here instead");
      await this.copies.suppress(tx, caller.agentId, row, "suppressed");
    });
  }
}
