import { AppError } from "../../core/errors.js";
import type { Logger } from "../../core/log.js";
import { addSeconds, now } from "../../core/time.js";
import type { EventBus } from "../../events/bus.js";
import { OutboundFailure } from "../../net/errors.js";
import type { MeshLinkPatch, MeshLinkRow } from "../../store/mesh.js";
import type { Store, Tx } from "../../store/store.js";
import type { MeshSyncResult } from "../../wire/mesh.js";
import type { Instance } from "../instance.js";
import type { AntiEntropy } from "./anti-entropy.js";
import { addApplied, LeaseLost, type CopyApplier } from "./apply.js";
import { ownersAudience } from "./audience.js";
import { incomingOf, type LinkTerms } from "./incoming.js";
import { peerPage } from "./page.js";
import { PeerFailure, PeerUnauthorized, PULL_PAGE, type PullClient, type PullTarget } from "./pull.js";
import { mappingOf, shownStatus } from "./link-record.js";
import { FAILURES_TO_FAIL, nextSyncDelaySeconds, SYNC_LEASE_SECONDS } from "./schedule.js";

/** Pages one run applies at most: a backlog is worked off over several runs, so one link cannot monopolise a server. */
const PAGE_BUDGET = 20;

export interface SyncOptions {
  /** Asked for (`POST /mesh/peers/{id}/sync`): a failure is the request's 502, and the result is announced even when nothing changed. */
  asked: boolean;
  /** Compare merkle summaries whether or not they are due. */
  antiEntropy?: boolean;
}

export interface SyncSettings {
  maxContentBytes: number;
  antiEntropyHours: number;
}

interface Progress extends MeshSyncResult {
  bytes: number;
  dropped: number;
}

/**
 * One sync of a link (CONTRACT §16), by the process holding its lease: the peer's changes after
 * the cursor, page by page, each applied with the cursor in one transaction; then, when due (or
 * after the peer went back in time), anti-entropy. The outcome is written back with the lease's
 * release: the schedule (jittered; doubling back-off to an hour after failures), the status, and
 * a status event only when the status changes.
 */
export class MeshSync {
  constructor(
    private readonly store: Store,
    private readonly bus: EventBus,
    private readonly instance: Pick<Instance, "open">,
    private readonly pull: PullClient,
    private readonly applier: CopyApplier,
    private readonly antiEntropy: AntiEntropy,
    private readonly settings: SyncSettings,
    private readonly log: Logger,
  ) {}

  async run(link: MeshLinkRow, holder: string, options: SyncOptions): Promise<MeshSyncResult & { bytes: number }> {
    const started = Date.now();
    const progress: Progress = { pages: 0, applied: 0, skipped: 0, rejected: 0, tombstones: 0, duration_ms: 0, cursor: link.cursor, bytes: 0, dropped: 0 };
    let repaired = false;
    let budgetLeft = true;
    try {
      const token = this.instance.open(link.token_sealed);
      if (token === null) throw new PeerFailure("the link's token cannot be read with this server's secret.key");
      const target: PullTarget = { url: link.url, token };
      const terms: LinkTerms = {
        linkId: link.id,
        projects: mappingOf(link),
        maxConfidence: link.max_confidence,
        maxContentBytes: this.settings.maxContentBytes,
      };
      const pulled = await this.pullChanges(link, holder, target, terms, progress);
      budgetLeft = pulled.finished;
      if (pulled.reset || options.antiEntropy === true || link.anti_entropy_at <= now()) {
        const repair = await this.antiEntropy.run(link, target, terms, () => this.extendLease(link, holder));
        addApplied(progress, repair);
        progress.bytes += repair.bytes;
        repaired = true;
      }
    } catch (error) {
      progress.duration_ms = Date.now() - started;
      await this.failed(link, holder, error);
      if (options.asked) throw asRequestError(error);
      return progress;
    }
    progress.duration_ms = Date.now() - started;
    await this.succeeded(link, holder, progress, repaired, budgetLeft, options.asked);
    return progress;
  }

  /** The change feed after the cursor, up to the page budget. `finished`: the peer had nothing more. */
  private async pullChanges(link: MeshLinkRow, holder: string, target: PullTarget, terms: LinkTerms, progress: Progress): Promise<{ finished: boolean; reset: boolean }> {
    let limit = PULL_PAGE;
    for (let pages = 0; pages < PAGE_BUDGET; ) {
      let pulled;
      try {
        pulled = await this.pull.changes(target, progress.cursor, limit);
      } catch (error) {
        // A page of large entries may pass the body cap: ask for fewer, down to one.
        if (error instanceof PeerFailure && error.cause instanceof OutboundFailure && error.cause.kind === "too-large" && limit > 1) {
          limit = Math.max(1, Math.floor(limit / 4));
          continue;
        }
        throw error;
      }
      pages++;
      progress.pages++;
      progress.bytes += pulled.bytes;
      if (pulled.body === null) throw new PeerFailure("the peer's feed is not there (404)");
      const page = peerPage(pulled.body, target.url, link.peer_instance_id, limit);
      if (page.items.length === 0) {
        // The peer's newest change is behind what was applied: it lost data or was restored from a
        // backup. Follow it from where it is now, and let anti-entropy find what differs.
        if (page.maxChangeSeq < progress.cursor) {
          await this.moveCursor(link, holder, page.maxChangeSeq);
          progress.cursor = page.maxChangeSeq;
          return { finished: true, reset: true };
        }
        return { finished: true, reset: false };
      }
      const incoming = page.items.map((raw) => incomingOf(raw, terms));
      const next = Math.max(progress.cursor, ...incoming.map((item) => item.changeSeq ?? 0));
      // A page that does not move the cursor would be asked for again for ever.
      if (next <= progress.cursor) throw new PeerFailure("the peer's feed did not move past the cursor");
      const applied = await this.applier.apply(link, incoming, { holder, cursor: next });
      addApplied(progress, applied);
      progress.cursor = next;
      await this.extendLease(link, holder);
      if (page.items.length < limit) return { finished: true, reset: false };
    }
    return { finished: false, reset: false };
  }

  private async moveCursor(link: MeshLinkRow, holder: string, cursor: number): Promise<void> {
    const moved = await this.store.transaction((tx) => this.store.mesh.advanceCursor(tx, link.pk, holder, cursor, { applied: 0, rejected: 0, dropped: 0 }));
    if (!moved) throw new LeaseLost();
  }

  private async extendLease(link: MeshLinkRow, holder: string): Promise<void> {
    const kept = await this.store.transaction((tx) => this.store.mesh.extendLease(tx, link.pk, holder, addSeconds(now(), SYNC_LEASE_SECONDS)));
    if (!kept) throw new LeaseLost();
  }

  private async succeeded(link: MeshLinkRow, holder: string, progress: Progress, repaired: boolean, finished: boolean, asked: boolean): Promise<void> {
    const at = now();
    const patch: MeshLinkPatch = {
      status: "active",
      failures: 0,
      last_sync_at: at,
      last_success_at: at,
      last_error: null,
      // A run that stopped at its budget is due again at once; claims go oldest-due first, so other links come before it.
      next_sync_at: finished ? addSeconds(at, nextSyncDelaySeconds(link, 0)) : at,
      anti_entropy_at: repaired ? addSeconds(at, this.settings.antiEntropyHours * 3600) : undefined,
    };
    const changed = progress.applied + progress.tombstones + progress.rejected > 0;
    await this.finish(link, holder, patch, async (tx, audience) => {
      if (!changed && !asked && !repaired) return;
      await this.bus.emit(tx, {
        type: "mesh.sync.completed",
        agentId: `mesh:${link.id}`,
        project: null,
        audience,
        payload: {
          link_id: link.id,
          pages: progress.pages,
          applied: progress.applied,
          skipped: progress.skipped,
          rejected: progress.rejected,
          tombstones: progress.tombstones,
          cursor: progress.cursor,
          anti_entropy: repaired,
        },
      });
    });
  }

  private async failed(link: MeshLinkRow, holder: string, error: unknown): Promise<void> {
    if (error instanceof LeaseLost) return;
    if (!(error instanceof PeerFailure || error instanceof PeerUnauthorized)) this.log.error("mesh sync failed", { link_id: link.id, error });
    const failures = link.failures + 1;
    const unauthorized = error instanceof PeerUnauthorized;
    const message = error instanceof PeerFailure || error instanceof PeerUnauthorized ? error.message : "the sync failed on this server (see its log)";
    const at = now();
    await this.finish(link, holder, {
      status: unauthorized ? "unauthorized" : failures >= FAILURES_TO_FAIL ? "failing" : link.status,
      failures,
      last_sync_at: at,
      last_error: message.slice(0, 500),
      next_sync_at: addSeconds(at, nextSyncDelaySeconds(link, failures)),
    });
  }

  /** Writes the outcome and releases the lease, with a status event when the shown status changed. */
  private async finish(
    link: MeshLinkRow,
    holder: string,
    patch: MeshLinkPatch,
    more?: (tx: Tx, audience: string[]) => Promise<void>,
  ): Promise<void> {
    if (!this.store.open) return;
    await this.store.transaction(async (tx) => {
      // Read again: a PATCH (a pause) may have committed since the claim.
      const current = await this.store.mesh.linkById(tx, link.id);
      if (!current) return;
      if (!(await this.store.mesh.finishSync(tx, link.pk, holder, { ...patch, updated_at: now() }))) return;
      const audience = await ownersAudience(this.store, tx);
      const before = shownStatus(current);
      const after = shownStatus({ paused: current.paused, status: patch.status ?? current.status });
      if (before !== after) {
        await this.bus.emit(tx, { type: "mesh.peer.status", agentId: `mesh:${link.id}`, project: null, audience, payload: { link_id: link.id, status: after, previous: before } });
      }
      await more?.(tx, audience);
    });
  }
}

/** A failure the caller of `POST /mesh/peers/{id}/sync` waited for: 502 naming the peer, never its body. */
function asRequestError(error: unknown): unknown {
  if (error instanceof PeerUnauthorized || error instanceof PeerFailure) return new AppError("UPSTREAM_ERROR", error.message, { cause: error });
  if (error instanceof LeaseLost) return new AppError("CONFLICT", "another sync of this link took over");
  return error;
}

