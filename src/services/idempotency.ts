import { createHash } from "node:crypto";
import { invalid } from "../core/errors.js";
import { setTimeout as sleep } from "node:timers/promises";
import { now } from "../core/time.js";
import type { Store } from "../store/store.js";

export interface StoredReply {
  status: number;
  body: unknown;
  headers: Record<string, string>;
}

const RETENTION_MS = 24 * 3600_000;

/** Stable JSON: object keys sorted, so the same request always hashes the same. */
function canonical(value: unknown): string {
  return JSON.stringify(value, (_key, item: unknown) =>
    item && typeof item === "object" && !Array.isArray(item)
      ? Object.fromEntries(Object.entries(item as Record<string, unknown>).sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0)))
      : item,
  );
}

export const requestHash = (operation: string, input: unknown): string =>
  createHash("sha256").update(operation).update("\0").update(canonical(input)).digest("hex");

/** How long a request with a key may run before another may take the key over (its server stopped). */
const RESERVATION_STALE_MS = 120_000;
/** How often a repeat polls for the answer of the first request when that one runs elsewhere. */
const POLL_MS = 50;

/**
 * `Idempotency-Key`: the first response per (agent, key) is kept for 24 h and replayed for a
 * repeat of the same request; a concurrent repeat waits for the first to finish. The key is
 * reserved in the store before the request runs, so this holds across server processes too: a
 * repeat that reaches another server waits for the answer there.
 */
export class IdempotencyService {
  private readonly inFlight = new Map<string, Promise<void>>();

  constructor(private readonly store: Store) {}

  async run(
    agentId: string,
    key: string,
    hash: string,
    execute: () => Promise<StoredReply>,
  ): Promise<{ reply: StoredReply; replayed: boolean }> {
    const slot = `${agentId}\0${key}`;
    for (let running = this.inFlight.get(slot); running; running = this.inFlight.get(slot)) {
      await running;
    }
    // Taken before the store is asked (that waits), so a concurrent repeat on this server waits
    // for this run, its stored answer included, instead of polling the store.
    let release = (): void => undefined;
    this.inFlight.set(slot, new Promise<void>((resolve) => (release = resolve)));
    try {
      const answered = await this.claim(agentId, key, hash);
      if (answered) return { reply: answered, replayed: true };
      let reply: StoredReply;
      try {
        reply = await execute();
      } catch (error) {
        await this.store.transaction((tx) => this.store.idempotency.release(tx, agentId, key));
        throw error;
      }
      await this.store.transaction((tx) =>
        // Transient failures are not the request's answer; a retry should run it again.
        reply.status < 500 && reply.status !== 429
          ? this.store.idempotency.complete(tx, agentId, key, {
              status: reply.status,
              body: reply.body === undefined ? null : JSON.stringify(reply.body),
              headers: JSON.stringify(reply.headers),
            })
          : this.store.idempotency.release(tx, agentId, key),
      );
      return { reply, replayed: false };
    } finally {
      this.inFlight.delete(slot);
      release();
    }
  }

  /**
   * Reserves the key for this request (null: go ahead and run it), or returns the answer stored
   * under it, waiting while a request with the key runs on another server.
   */
  private async claim(agentId: string, key: string, hash: string): Promise<StoredReply | null> {
    for (;;) {
      const at = now();
      if (await this.store.transaction((tx) => this.store.idempotency.reserve(tx, agentId, key, hash, at))) return null;
      const stored = await this.store.idempotency.find(this.store.reader, agentId, key);
      if (!stored) continue;
      if (stored.request_hash !== hash) {
        throw invalid("Idempotency-Key", "already used with a different request", "idempotency key reused with a different request");
      }
      if (stored.status !== 0) {
        return {
          status: stored.status,
          body: stored.body === null ? undefined : (JSON.parse(stored.body) as unknown),
          headers: JSON.parse(stored.headers) as Record<string, string>,
        };
      }
      const staleBefore = new Date(Date.now() - RESERVATION_STALE_MS).toISOString();
      if (await this.store.transaction((tx) => this.store.idempotency.takeOver(tx, agentId, key, staleBefore, now()))) return null;
      await sleep(POLL_MS);
    }
  }

  prune(): Promise<number> {
    return this.store.transaction((tx) => this.store.idempotency.prune(tx, new Date(Date.now() - RETENTION_MS).toISOString()));
  }
}
