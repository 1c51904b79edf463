import { createHash } from "node:crypto";
import { invalid } from "../core/errors.js";
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

/**
 * `Idempotency-Key`: the first response per (agent, key) is kept for 24 h and replayed for a
 * repeat of the same request; a concurrent repeat waits for the first to finish.
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
    // Taken before the stored response is looked up (that waits on the store), so a concurrent
    // repeat waits for this run, its stored response included, instead of running too.
    let release = (): void => undefined;
    this.inFlight.set(slot, new Promise<void>((resolve) => (release = resolve)));
    try {
      const stored = await this.store.idempotency.find(this.store.reader, agentId, key);
      if (stored) {
        if (stored.request_hash !== hash) {
          throw invalid("Idempotency-Key", "already used with a different request", "idempotency key reused with a different request");
        }
        return {
          reply: {
            status: stored.status,
            body: stored.body === null ? undefined : (JSON.parse(stored.body) as unknown),
            headers: JSON.parse(stored.headers) as Record<string, string>,
          },
          replayed: true,
        };
      }
      const reply = await execute();
      // Transient failures are not the request's answer; a retry should run it again.
      if (reply.status < 500 && reply.status !== 429) {
        await this.store.transaction((tx) =>
          this.store.idempotency.save(
            tx,
            agentId,
            key,
            {
              request_hash: hash,
              status: reply.status,
              body: reply.body === undefined ? null : JSON.stringify(reply.body),
              headers: JSON.stringify(reply.headers),
            },
            now(),
          ),
        );
      }
      return { reply, replayed: false };
    } finally {
      this.inFlight.delete(slot);
      release();
    }
  }

  prune(): Promise<number> {
    return this.store.transaction((tx) => this.store.idempotency.prune(tx, new Date(Date.now() - RETENTION_MS).toISOString()));
  }
}
