import type { Config } from "../core/config.js";
import { AppError, conflict } from "../core/errors.js";
import type { EmbeddingQueue } from "../embed/queue.js";
import type { Reader, Store } from "../store/store.js";

const HOUR_MS = 3_600_000;
/** Until the model has embedded something in this process, what one text is taken to cost (use-lite, a compiled description, a small machine). */
const ASSUMED_MS_PER_TEXT = 20;
/** A backlog that is not moving (no model loaded) is worth asking about again after this long. */
const STALLED_RETRY_SECONDS = 60;
/** Longest Retry-After a quota gives: every hourly allowance has refilled by then. */
const MAX_RETRY_SECONDS = 3600;
/**
 * How long a project's count of live entries stands in for a new count, while the project is far
 * from its cap. Counting reads every live entry of the project: 1 ms a write at 10,000 entries,
 * ten at 100,000 (issue 30), most of what made writes slower in a larger store.
 */
const COUNT_FRESH_MS = 1000;
/** The share of the cap a project must be below, by the remembered count, for that count to do. */
const FAR_FROM_CAP = 0.9;
/** Remembered counts past which the stale ones are swept. */
const MAX_COUNTED_PROJECTS = 1000;

/** The bucket names in `quota_buckets`. */
const COMPILE_UNITS = "compile_units";
const COMPILE_BYTES = "compile_bytes";

/** What a compile would add, as the quotas weigh it. */
export interface CompileCost {
  /** Units written: entries created or rewritten (a unit whose sha did not change costs nothing). */
  units: number;
  /** UTF-8 bytes of the entries written (what is stored, and embedded). */
  bytes: number;
  /** Entries created (rewrites replace one): what the project's cap counts. */
  created: number;
  /** Whether the entries are left to the backfill rather than embedded within the request. */
  bulk: boolean;
}

type QuotaSettings = Pick<Config, "COMPILE_UNITS_PER_HOUR" | "COMPILE_BYTES_PER_HOUR" | "EMBEDDING_BACKLOG_PER_AGENT" | "MAX_ENTRIES_PER_PROJECT">;

/** A 429 whose detail also says the wait: an MCP client sees the detail, not the Retry-After header. */
function rateLimited(detail: string, retryAfter: number): AppError {
  const seconds = Math.min(MAX_RETRY_SECONDS, Math.max(1, Math.ceil(retryAfter)));
  return new AppError("RATE_LIMITED", `${detail}; try again in ${seconds} s`, { retryAfter: seconds });
}

/**
 * Quotas that keep one agent's bulk work from crowding out the team's (issue 25): compile units
 * and bytes per agent per hour and the agent's embedding backlog (429 with Retry-After: wait and
 * it passes), and the entries a project may hold (409: a cap, which waiting does not lift).
 * Everything is counted in the store, so several servers on one database enforce one quota.
 */
export class Quotas {
  /** Per project ('' for global memory): a count of its live entries, plus the entries admitted here since. */
  private readonly counted = new Map<string, { entries: number; atMs: number }>();

  constructor(
    private readonly store: Store,
    private readonly settings: QuotaSettings,
    private readonly queue: EmbeddingQueue,
  ) {}

  /**
   * The refusal (409) of a write that would take `project` (null: global memory) past
   * MAX_ENTRIES_PER_PROJECT live entries, or null when there is room. Counted before the write's
   * transaction, not under its lock: writes racing at the edge may pass the cap by the few in flight.
   */
  async roomRefusal(r: Reader, project: string | null, adding: number): Promise<AppError | null> {
    const max = this.settings.MAX_ENTRIES_PER_PROJECT;
    if (max === 0 || adding === 0) return null;
    // A recent count, with what was admitted here since, decides while the project is far from its
    // cap; near it every write counts again. Writes through other servers in that second are not in
    // the remembered count, which only the last tenth of the cap could let matter.
    const key = project ?? "";
    const nowMs = Date.now();
    const remembered = this.counted.get(key);
    if (remembered && nowMs - remembered.atMs < COUNT_FRESH_MS && remembered.entries + adding <= max * FAR_FROM_CAP) {
      remembered.entries += adding;
      return null;
    }
    const held = await this.store.quotas.liveEntries(r, project);
    if (held + adding <= max) {
      // A count older than COUNT_FRESH_MS is never used again: drop those, so the map holds only
      // the projects written to in the last second, however many projects there are.
      if (this.counted.size >= MAX_COUNTED_PROJECTS) {
        for (const [name, count] of this.counted) if (nowMs - count.atMs >= COUNT_FRESH_MS) this.counted.delete(name);
      }
      this.counted.set(key, { entries: held + adding, atMs: nowMs });
      return null;
    }
    const where = project === null ? "global memory" : `project ${project}`;
    return conflict(`${where} is full: it holds ${held} entries, this write adds ${adding}, and MAX_ENTRIES_PER_PROJECT is ${max}; delete or prune entries first`);
  }

  /**
   * Refuses bulk work from an agent whose entries waiting for a vector number
   * EMBEDDING_BACKLOG_PER_AGENT or more, until the backfill has worked them down.
   */
  async checkBacklog(agentId: string): Promise<void> {
    const max = this.settings.EMBEDDING_BACKLOG_PER_AGENT;
    if (max === 0) return;
    const waiting = await this.store.quotas.unembeddedBy(this.store.reader, agentId);
    if (waiting < max) return;
    const perText = this.queue.msPerText ?? ASSUMED_MS_PER_TEXT;
    const seconds = this.queue.status === "ready" ? ((waiting - max + 1) * perText) / 1000 : STALLED_RETRY_SECONDS;
    throw rateLimited(`${waiting} of your entries are waiting to be embedded (EMBEDDING_BACKLOG_PER_AGENT is ${max})`, seconds);
  }

  /**
   * Admits a compile, or refuses it: 409 when the project would pass its cap, 429 when the agent's
   * backlog is full (for work left to the backfill) or its hourly units or bytes are spent, 413
   * when the request alone is more than an hour's allowance. The hourly charge is taken last,
   * both buckets or neither, so a refused request costs nothing.
   */
  async admitCompile(agentId: string, project: string | null, cost: CompileCost): Promise<void> {
    if (cost.units === 0) return;
    const full = await this.roomRefusal(this.store.reader, project, cost.created);
    if (full) throw full;
    if (cost.bulk) await this.checkBacklog(agentId);
    const buckets = [
      { quota: COMPILE_UNITS, setting: "COMPILE_UNITS_PER_HOUR", what: "units", cost: cost.units, capacity: this.settings.COMPILE_UNITS_PER_HOUR },
      { quota: COMPILE_BYTES, setting: "COMPILE_BYTES_PER_HOUR", what: "bytes", cost: cost.bytes, capacity: this.settings.COMPILE_BYTES_PER_HOUR },
    ].filter((bucket) => bucket.capacity > 0);
    for (const bucket of buckets) {
      if (bucket.cost > bucket.capacity) {
        throw new AppError("PAYLOAD_TOO_LARGE", `this compile writes ${bucket.cost} ${bucket.what}, more than ${bucket.setting} (${bucket.capacity}) allows in an hour; send it in smaller requests`);
      }
    }
    if (buckets.length === 0) return;
    const nowMs = Date.now();
    // A refusal thrown inside the transaction rolls back the charge already taken from the other bucket.
    await this.store.transaction(async (tx) => {
      for (const bucket of buckets) {
        const charge = await this.store.quotas.charge(tx, agentId, bucket.quota, bucket.cost, bucket.capacity, HOUR_MS, nowMs);
        if (!charge.granted) {
          throw rateLimited(`compile quota reached: this compile writes ${bucket.cost} ${bucket.what} and ${bucket.setting} is ${bucket.capacity}`, charge.retryAfterSeconds);
        }
      }
    });
  }

  /** Forgets buckets idle for an hour: full again, the same as none. */
  prune(nowMs = Date.now()): Promise<number> {
    return this.store.transaction((tx) => this.store.quotas.prune(tx, nowMs - HOUR_MS));
  }
}
