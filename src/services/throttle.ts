import ipaddr from "ipaddr.js";
import { AppError } from "../core/errors.js";
import { IdleTable } from "../core/idle-table.js";
import type { SharedFailureLog } from "../store/store.js";

/** Failed authentications one address may make for one identity in a minute (CONTRACT §2.2a). */
export const FAILURES_PER_MINUTE = 20;
const THROTTLE_CAPACITY = 10_000;
const WINDOW_MS = 60_000;

/** Identities that are not agent ids: the secrets that have no claimed owner. */
export const REGISTRATION_IDENTITY = "(registration key)";
export const UI_PASSWORD_IDENTITY = "(ui password)";
export const UI_LINK_IDENTITY = "(ui login link)";

/**
 * Failed web UI sign-ins one address may make in a minute (CONTRACT §2.2 says 5, §2.2a 20 for every
 * credential: the stricter holds). A password a human chose is weaker than a generated key.
 */
export const UI_LOGIN_FAILURES_PER_MINUTE = 5;

/** The failures an identity is allowed a minute: fewer for the web UI's sign-in, FAILURES_PER_MINUTE for the rest. */
const failuresAllowed = (identity: string): number =>
  identity === UI_PASSWORD_IDENTITY || identity === UI_LINK_IDENTITY ? UI_LOGIN_FAILURES_PER_MINUTE : FAILURES_PER_MINUTE;

/**
 * Where a request comes from, as the throttle counts it: an IPv4 address (also when it arrives
 * IPv4-mapped), or an IPv6 address's /64, which one host can fill with addresses at will.
 */
export function clientKey(address: string | undefined): string {
  if (address === undefined || !ipaddr.isValid(address)) return "unknown";
  const parsed = ipaddr.process(address);
  if (parsed.kind() === "ipv4") return parsed.toString();
  const parts = (parsed as ipaddr.IPv6).parts.slice(0, 4);
  return `${parts.map((part) => part.toString(16)).join(":")}::/64`;
}

/**
 * Credential guessing: after FAILURES_PER_MINUTE failures (UI_LOGIN_FAILURES_PER_MINUTE for the web
 * UI's sign-in) for one identity from one address, further attempts for it from there are refused
 * with 429 before the credential is looked at, until the oldest failure is a minute old. Other addresses, and other identities, are unaffected, so a
 * guesser elsewhere cannot lock the owner of a credential out. Failures are counted in memory
 * where this process is the only server, in the store where several share it (else each server
 * would allow its own twenty).
 */
/** One pair's attempts: being checked, being admitted, finished so far, and waiting for a turn. */
interface Gate {
  inFlight: number;
  admitting: number;
  finished: number;
  waiting: (() => void)[];
}

export class FailureThrottle {
  private readonly failures: IdleTable<number[]>;
  /**
   * Attempts being checked right now, per pair, and those waiting for a turn. An attempt is
   * admitted only while the failures already counted plus the attempts in flight stay under the
   * limit: a burst of wrong keys sent at once is checked twenty at a time, not all before the
   * first failure is counted. (One agent's own many requests at once pass as fast: they succeed.)
   */
  private readonly gates = new Map<string, Gate>();

  constructor(
    capacity = THROTTLE_CAPACITY,
    private readonly shared?: SharedFailureLog,
  ) {
    this.failures = new IdleTable(capacity, (times, nowMs) => nowMs - (times[times.length - 1] ?? 0) >= WINDOW_MS);
  }

  /** (address, identity) pairs currently remembered in memory. */
  get size(): number {
    return this.failures.size;
  }

  private async recent(key: string, nowMs: number, limit: number): Promise<number[]> {
    if (this.shared) return this.shared.recent(key, nowMs - WINDOW_MS, limit);
    return (this.failures.get(key) ?? []).filter((at) => nowMs - at < WINDOW_MS);
  }

  /** 429 with Retry-After when the pair has used up its failures. */
  async check(address: string | undefined, identity: string, nowMs = Date.now()): Promise<void> {
    await this.used(address, identity, nowMs);
  }

  /** How many failures the pair has used; 429 with Retry-After when that is all of them. */
  private async used(address: string | undefined, identity: string, nowMs = Date.now()): Promise<number> {
    const times = await this.recent(`${clientKey(address)} ${identity}`, nowMs, failuresAllowed(identity));
    if (times.length < failuresAllowed(identity)) return times.length;
    const retryAfter = Math.max(1, Math.ceil((WINDOW_MS - (nowMs - (times[0] as number))) / 1000));
    throw new AppError("RATE_LIMITED", "too many failed attempts; try again later", { retryAfter });
  }

  async fail(address: string | undefined, identity: string, nowMs = Date.now()): Promise<void> {
    const key = `${clientKey(address)} ${identity}`;
    if (this.shared) {
      await this.shared.record(key, nowMs);
      return;
    }
    const allowed = failuresAllowed(identity);
    const times = await this.recent(key, nowMs, allowed);
    times.push(nowMs);
    this.failures.set(key, times.slice(-allowed), nowMs);
  }

  /**
   * Runs `attempt` unless the pair is throttled, counting an UNAUTHENTICATED failure against it.
   * Where several servers share the failures, each admits its own attempts this way, so a burst
   * spread over them all at once can have each server's twenty checked before the counts meet.
   */
  async guard<T>(address: string | undefined, identity: string, attempt: () => T | Promise<T>): Promise<T> {
    const key = `${clientKey(address)} ${identity}`;
    const gate = await this.admit(key, address, identity);
    try {
      return await attempt();
    } catch (error) {
      if (error instanceof AppError && error.code === "UNAUTHENTICATED") await this.fail(address, identity);
      throw error;
    } finally {
      // The failure (if any) is counted by now: in the same turn, the attempt leaves the gate.
      gate.inFlight -= 1;
      gate.finished += 1;
      // Every waiter looks again: the next may be admitted, or refused now that failures filled the budget.
      for (const wake of gate.waiting.splice(0)) wake();
      this.release(key, gate);
    }
  }

  /**
   * Waits for a turn of the pair's budget; 429 once its failures alone use the budget up. A count
   * read while an attempt finished may have missed that attempt's failure (which was in flight
   * when the read began, and no longer is): it is read again.
   */
  private async admit(key: string, address: string | undefined, identity: string): Promise<Gate> {
    let gate = this.gates.get(key);
    if (!gate) {
      gate = { inFlight: 0, admitting: 0, finished: 0, waiting: [] };
      this.gates.set(key, gate);
    }
    const turn = gate;
    turn.admitting += 1;
    try {
      for (;;) {
        const finished = turn.finished;
        const failed = await this.used(address, identity);
        if (turn.finished !== finished) continue;
        if (failed + turn.inFlight < failuresAllowed(identity)) {
          turn.inFlight += 1;
          return turn;
        }
        await new Promise<void>((resolve) => turn.waiting.push(resolve));
      }
    } finally {
      turn.admitting -= 1;
      this.release(key, turn);
    }
  }

  private release(key: string, gate: Gate): void {
    if (gate.inFlight === 0 && gate.admitting === 0) this.gates.delete(key);
  }

  /** Forgets pairs with no failure in the last minute, in memory (a job calls it every minute in every process). */
  sweep(nowMs = Date.now()): number {
    return this.failures.sweep(nowMs);
  }

  /** Forgets failures older than the minute from the store (a job calls it once a minute, in one process). */
  async forgetShared(nowMs = Date.now()): Promise<number> {
    return this.shared ? this.shared.forget(nowMs - WINDOW_MS) : 0;
  }
}
