import { AsyncLocalStorage } from "node:async_hooks";
import { checkByteSize } from "../core/byte-size.js";
import { conflict, notFound } from "../core/errors.js";
import { now } from "../core/time.js";
import type { Reader, Store } from "../store/store.js";
import type { EventBus } from "../events/bus.js";
import { STATUS_KEYS, type ArchivistLease, type ArchivistState, type ArchivistStatus } from "../wire/archivist.js";
import type { Caller } from "./caller.js";
import { locks } from "./locks.js";

export interface LeaseRequest {
  holder: string;
  ttlSeconds: number;
  /** Give the lease up now (the holder is stopping), so a successor need not wait out the TTL. */
  release?: boolean | undefined;
}

/** Keys the archivist may keep; past this, new keys are refused (it should reuse or prune keys). */
const MAX_STATE_KEYS = 100_000;
const MAX_STATE_VALUE_BYTES = 16 * 1024;

/**
 * The archivist singleton: a lease with a fencing token, and the key-value store the archivist
 * keeps its own state in (it never opens the database itself).
 *
 * Fencing: a request that carries `X-Archivist-Lease` runs inside `fenced(token, …)`. Every
 * transaction it runs is checked by `checkFence` (a store guard) just before it commits, so a write
 * made with a token that is no longer current rolls back with 409 at commit time, however long
 * the request took to get there.
 */
export class ArchivistService {
  private readonly fence = new AsyncLocalStorage<number>();

  constructor(
    private readonly store: Store,
    private readonly bus: EventBus,
  ) {
    store.addGuard((tx) => this.checkFence(tx));
  }

  /** Runs `work` as a write fenced by `token`: refused unless that is the current lease's token. */
  async fenced<T>(token: number, work: () => Promise<T>): Promise<T> {
    await this.fence.run(token, () => this.checkFence(this.store.reader));
    return this.fence.run(token, work);
  }

  /** Throws 409 when the running request is fenced by a token that is no longer current. */
  async checkFence(r: Reader): Promise<void> {
    const token = this.fence.getStore();
    if (token === undefined) return;
    if (token !== (await this.store.archivist.lease(r)).token) throw conflict("archivist lease token is not current");
  }

  lease(caller: Caller, request: LeaseRequest): Promise<ArchivistLease> {
    return this.store.transaction(async (tx) => {
      const at = new Date();
      const current = await this.store.archivist.lease(tx);
      const live = current.holder !== null && current.expires_at !== null && current.expires_at > at.toISOString();
      const answer = (granted: boolean, row = current): ArchivistLease => ({ granted, holder: row.holder, expires_at: row.expires_at, token: row.token });
      if (request.release) {
        if (current.holder !== request.holder) return answer(false);
        const released = { ...current, holder: null, expires_at: null, acquired_at: null };
        await this.store.archivist.saveLease(tx, released);
        await this.bus.emit(tx, { type: "archivist.lease", agentId: caller.agentId, project: null, payload: { holder: null, previous: request.holder, token: current.token } });
        return answer(false, released);
      }
      if (live && current.holder !== request.holder) return answer(false);
      const expiresAt = new Date(at.getTime() + request.ttlSeconds * 1000).toISOString();
      const changesHands = current.holder !== request.holder;
      const next = {
        holder: request.holder,
        // A new holder gets a new token, so writes still carrying the old one are refused.
        token: changesHands ? current.token + 1 : current.token,
        acquired_at: changesHands || !live ? at.toISOString() : current.acquired_at,
        expires_at: expiresAt,
      };
      await this.store.archivist.saveLease(tx, next);
      if (changesHands) {
        await this.bus.emit(tx, {
          type: "archivist.lease",
          agentId: caller.agentId,
          project: null,
          payload: { holder: next.holder, previous: current.holder, token: next.token },
        });
      }
      return answer(true, next);
    });
  }

  /**
   * What a human wants to know of the archivist: who holds the lease, and what the working archivist
   * last said of itself (the state keys it keeps for this: `process` and `last_pass`).
   */
  async status(enabled: boolean): Promise<ArchivistStatus> {
    const reader = this.store.reader;
    const current = await this.store.archivist.lease(reader);
    const live = current.holder !== null && current.expires_at !== null && current.expires_at > now();
    const stored = async (key: string): Promise<unknown> => {
      const row = await this.store.archivist.state(reader, key);
      return row ? (JSON.parse(row.value) as unknown) : null;
    };
    const record = (value: unknown): Record<string, unknown> | null =>
      typeof value === "object" && value !== null && !Array.isArray(value) ? (value as Record<string, unknown>) : null;
    const process = record(await stored(STATUS_KEYS.process));
    const lastPass = record(await stored(STATUS_KEYS.lastPassReport));
    return {
      enabled,
      holder: live ? current.holder : null,
      expires_at: live ? current.expires_at : null,
      llm: typeof process?.llm === "boolean" ? process.llm : null,
      provider: typeof process?.provider === "string" ? process.provider : null,
      last_pass: lastPass,
    };
  }

  async getState(key: string): Promise<ArchivistState> {
    const row = await this.store.archivist.state(this.store.reader, key);
    if (!row) throw notFound("state key");
    return { key: row.key, value: JSON.parse(row.value) as unknown, updated_at: row.updated_at };
  }

  async putState(key: string, value: unknown): Promise<ArchivistState> {
    const text = JSON.stringify(value);
    checkByteSize(text, MAX_STATE_VALUE_BYTES, "value exceeds");
    return this.store.transaction(async (tx) => {
      await tx.lock(locks.archivistState());
      if (!(await this.store.archivist.state(tx, key)) && (await this.store.archivist.countState(tx)) >= MAX_STATE_KEYS) {
        throw conflict("archivist state is full");
      }
      const row = { key, value: text, updated_at: now() };
      await this.store.archivist.putState(tx, row);
      return { key, value, updated_at: row.updated_at };
    });
  }
}
