// The events' lock, as the servers report it (`cairn_events_lock_hold_seconds` on /metrics,
// PostgreSQL only): how long each event-writing transaction held it, from its first event to the
// end of its commit. Those transactions commit one at a time, so one over the mean hold is the
// most of them any number of servers can commit in a second.
import type { ServerProcess } from "./lib.js";

export interface Holds {
  count: number;
  sum: number;
  /** Cumulative counts by upper bound (seconds), as Prometheus gives them. */
  buckets: Map<number, number>;
}

const SAMPLE = /^cairn_events_lock_hold_seconds_(bucket|sum|count)(?:\{le="([^"]+)"\})? (\S+)$/;

/** The histogram summed over `servers`; null where the servers report none (SQLite, or a build before it existed). */
export async function readHolds(servers: ServerProcess[]): Promise<Holds | null> {
  const total: Holds = { count: 0, sum: 0, buckets: new Map() };
  let found = false;
  // The first server bootstrapped the database and holds the owner's credentials; they are the others' too.
  const owner = (servers[0] as ServerProcess).owner();
  for (const server of servers) {
    const reply = await server.client.get("/metrics", owner);
    if (reply.status !== 200) throw new Error(`GET /metrics: ${reply.status} ${reply.body}`);
    for (const line of reply.body.split("\n")) {
      const match = SAMPLE.exec(line);
      if (!match) continue;
      found = true;
      const value = Number(match[3]);
      if (match[1] === "count") total.count += value;
      else if (match[1] === "sum") total.sum += value;
      else {
        const bound = match[2] === "+Inf" ? Infinity : Number(match[2]);
        total.buckets.set(bound, (total.buckets.get(bound) ?? 0) + value);
      }
    }
  }
  return found ? total : null;
}

/** What was observed between two readings. */
export function holdsBetween(before: Holds | null, after: Holds | null): Holds | null {
  if (!before || !after) return null;
  const buckets = new Map<number, number>();
  for (const [bound, count] of after.buckets) buckets.set(bound, count - (before.buckets.get(bound) ?? 0));
  return { count: after.count - before.count, sum: after.sum - before.sum, buckets };
}

/** The quantile `q` by linear interpolation within its bucket, in milliseconds. */
function quantileMs(holds: Holds, q: number): number {
  const bounds = [...holds.buckets.keys()].sort((a, b) => a - b);
  const rank = q * holds.count;
  let lower = 0;
  let below = 0;
  for (const bound of bounds) {
    const count = holds.buckets.get(bound) ?? 0;
    if (count >= rank) {
      if (bound === Infinity) return lower * 1000;
      const share = count === below ? 0 : (rank - below) / (count - below);
      return (lower + share * (bound - lower)) * 1000;
    }
    lower = bound;
    below = count;
  }
  return lower * 1000;
}

/** p50, p95 and mean hold (ms), and the ceiling the mean implies (event-writing transactions a second, however many servers). */
export function summarise(holds: Holds | null): { transactions: number; p50Ms: number; p95Ms: number; meanMs: number; ceilingPerSecond: number } | null {
  if (!holds || holds.count === 0) return null;
  const meanMs = (holds.sum / holds.count) * 1000;
  const two = (value: number): number => Math.round(value * 100) / 100;
  return { transactions: holds.count, p50Ms: two(quantileMs(holds, 0.5)), p95Ms: two(quantileMs(holds, 0.95)), meanMs: two(meanMs), ceilingPerSecond: Math.round(1000 / meanMs) };
}
