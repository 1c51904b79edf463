import { AsyncLocalStorage } from "node:async_hooks";
import { createHash } from "node:crypto";
import { setTimeout as sleep } from "node:timers/promises";
import { crashPoint } from "../core/crash-points.js";
import { AppError, invalid } from "../core/errors.js";
import type { Logger } from "../core/log.js";
import { now } from "../core/time.js";
import type { IdempotencyReply } from "../store/idempotency.js";
import type { Store, Tx } from "../store/store.js";

export interface StoredReply {
  status: number;
  body: unknown;
  headers: Record<string, string>;
}

/** A reply as the store keeps it: the body and headers as JSON text. */
const stored = (reply: StoredReply): IdempotencyReply => ({
  status: reply.status,
  body: reply.body === undefined ? null : JSON.stringify(reply.body),
  headers: JSON.stringify(reply.headers),
});

/** Status 0: the request took effect, but its answer is not stored (yet, or ever: see `run`). */
const NO_ANSWER: IdempotencyReply = { status: 0, body: null, headers: "{}" };

const RETENTION_MS = 24 * 3600_000;
/**
 * How long a change made under a key may wait for its answer before a repeat gives up on it: the
 * request is still running elsewhere until then, or its server stopped between two of its
 * transactions.
 */
const ANSWER_WAIT_MS = 120_000;
/** How often a repeat looks again for the answer of a request running on another server. */
const POLL_MS = 50;

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

/** Whether a reply is the request's answer (kept) or a passing failure a retry should run again. */
const isAnswer = (reply: StoredReply): boolean => reply.status < 500 && reply.status !== 429;

/** Thrown inside a transaction whose key another request's change already holds: it rolls back, and the request replays that one's answer. */
class KeyTaken extends Error {}

/** A keyed request while it runs: which transactions of its own have committed, and with what. */
class KeyedRun {
  /** Transactions of this request that committed (each wrote the key's row). */
  committed = 0;
  /** What the last of them returned. */
  lastResult: unknown = undefined;
  /** Whether the last of them stored an answer made of that value. */
  lastAnswered = false;
  /** Set when the request has returned: a transaction started afterwards from its context (a hook's) is not its. */
  finished = false;

  constructor(
    readonly agentId: string,
    readonly key: string,
    readonly hash: string,
    /** The reply a transaction's value makes, or null when it makes none (it is not the operation's answer). */
    readonly replyOf: (result: unknown) => StoredReply | null,
  ) {}
}

/** What ran: the reply, and the value its operation's handler returned. */
export interface Executed {
  reply: StoredReply;
  result: unknown;
}

/**
 * `Idempotency-Key` (CONTRACT §2): the first answer per (agent, key) is kept for 24 h and replayed
 * for a repeat of the same request, which never acts again.
 *
 * The answer is written by the transaction that makes the request's change, as the last thing it
 * does before committing (a store guard, in the request's context): a crash leaves either no
 * change and no key, or the change with its answer. The key's row is the lock: of requests with one
 * key racing on several servers, the first to commit its change holds it; another's change, on
 * meeting the row, rolls back, and that request replays the first's answer. Requests on one server
 * take turns before reaching the store. A request that changes nothing has its answer stored after
 * it runs, and one that fails has nothing stored, so a retry runs it again.
 *
 * The value the operation's last transaction returns must be what its handler returns (true of
 * nearly every operation: services build their answer inside the transaction); where it is not,
 * the answer is stored once more after the request, and a crash between the two leaves the change
 * with the key marked answerless: a repeat then refuses with 409 rather than act twice.
 */
export class IdempotencyService {
  private readonly inFlight = new Map<string, Promise<void>>();
  private readonly running = new AsyncLocalStorage<KeyedRun>();
  private readonly unmatched = new Set<string>();

  constructor(
    private readonly store: Store,
    private readonly log: Logger,
  ) {
    store.addGuard((tx, result) => this.recordAnswer(tx, result));
  }

  async run(
    agentId: string,
    key: string,
    hash: string,
    operation: { name: string; replyOf: (result: unknown) => StoredReply | null },
    execute: () => Promise<Executed>,
  ): Promise<{ reply: StoredReply; replayed: boolean }> {
    const slot = `${agentId}\0${key}`;
    for (let running = this.inFlight.get(slot); running; running = this.inFlight.get(slot)) await running;
    // Taken before the store is asked, so a concurrent repeat on this server waits for this run,
    // its stored answer included, instead of polling the store.
    let release = (): void => undefined;
    this.inFlight.set(slot, new Promise<void>((resolve) => (release = resolve)));
    try {
      for (;;) {
        const answered = await this.answered(agentId, key, hash);
        if (answered) return { reply: answered, replayed: true };
        const run = new KeyedRun(agentId, key, hash, operation.replyOf);
        crashPoint("idempotency:before-run");
        let executed: Executed;
        try {
          executed = await this.running.run(run, execute);
        } catch (error) {
          if (error instanceof KeyTaken) continue;
          throw error;
        } finally {
          run.finished = true;
        }
        if (run.committed > 0) crashPoint("idempotency:after-change");
        if (!(await this.settle(run, operation.name, executed))) continue;
        crashPoint("idempotency:before-reply");
        return { reply: executed.reply, replayed: false };
      }
    } finally {
      this.inFlight.delete(slot);
      release();
    }
  }

  /**
   * Stores the answer where the request's transactions did not already; false when, having changed
   * nothing, it finds the key taken by a request that did (the same request, racing it on another
   * server: its refusal came from meeting that one's change), whose answer it must give instead.
   */
  private async settle(run: KeyedRun, operation: string, { reply, result }: Executed): Promise<boolean> {
    if (run.committed === 0) {
      // It changed nothing (a refusal, a read, an action with nothing to do): its answer alone.
      if (!isAnswer(reply)) return true;
      return this.store.transaction((tx) => this.store.idempotency.claim(tx, run.agentId, run.key, run.hash, stored(reply), now()));
    }
    if (run.lastAnswered && run.lastResult === result) return true;
    if (!this.unmatched.has(operation)) {
      this.unmatched.add(operation);
      this.log.warn("an operation's answer is not its last transaction's value: its idempotency key's answer is stored after the change", {
        operation,
        transactions: run.committed,
      });
    }
    await this.store.transaction((tx) => this.store.idempotency.update(tx, run.agentId, run.key, isAnswer(reply) ? stored(reply) : NO_ANSWER));
    return true;
  }

  /** The store guard: in a keyed request's transaction, writes the key's row with the answer this transaction makes. */
  private async recordAnswer(tx: Tx, result: unknown): Promise<void> {
    const run = this.running.getStore();
    if (!run || run.finished) return;
    const reply = run.replyOf(result);
    const row = reply !== null && isAnswer(reply) ? stored(reply) : NO_ANSWER;
    if (run.committed === 0) {
      if (!(await this.store.idempotency.claim(tx, run.agentId, run.key, run.hash, row, now()))) throw new KeyTaken();
    } else {
      await this.store.idempotency.update(tx, run.agentId, run.key, row);
    }
    crashPoint("idempotency:before-commit");
    tx.afterCommit(() => {
      run.committed += 1;
      run.lastResult = result;
      run.lastAnswered = row !== NO_ANSWER;
    });
  }

  /**
   * The answer stored under the key for this request, waiting while a change made under it on
   * another server has no answer yet; null when the key is free.
   */
  private async answered(agentId: string, key: string, hash: string): Promise<StoredReply | null> {
    for (;;) {
      const row = await this.store.idempotency.find(this.store.reader, agentId, key);
      if (!row) return null;
      if (row.request_hash !== hash) {
        throw invalid("Idempotency-Key", "already used with a different request", "idempotency key reused with a different request");
      }
      if (row.status !== 0) {
        return {
          status: row.status,
          body: row.body === null ? undefined : (JSON.parse(row.body) as unknown),
          headers: JSON.parse(row.headers) as Record<string, string>,
        };
      }
      if (Date.parse(row.created_at) < Date.now() - ANSWER_WAIT_MS) {
        throw new AppError("CONFLICT", "the request with this Idempotency-Key took effect, but its answer was lost; read the resource instead of retrying");
      }
      await sleep(POLL_MS);
    }
  }

  prune(): Promise<number> {
    return this.store.transaction((tx) => this.store.idempotency.prune(tx, new Date(Date.now() - RETENTION_MS).toISOString()));
  }
}
