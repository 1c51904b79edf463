import type { FeedRow } from "../../store/feeds.js";
import type { FeedStatus } from "./records.js";

/** Polls failed in a row after which a feed is `failing` (and `feed.failing` is said once). */
export const FAILURES_TO_FAIL = 3;
/** The longest a failing feed waits between polls. */
const MAX_BACKOFF_SECONDS = 24 * 3600;

/** When a feed polls next: its interval after a success; after failures, the interval doubled per failure (≤ 24 h), and never before the server's Retry-After. */
export function nextPollDelaySeconds(row: Pick<FeedRow, "interval_minutes">, failures: number, retryAfterSeconds: number | null): number {
  const interval = row.interval_minutes * 60;
  const backoff = failures === 0 ? interval : Math.min(interval * 2 ** Math.min(failures, 20), MAX_BACKOFF_SECONDS);
  return Math.min(Math.max(backoff, retryAfterSeconds ?? 0), MAX_BACKOFF_SECONDS);
}

export const statusOf = (row: Pick<FeedRow, "paused" | "failing">): FeedStatus => (row.paused ? "paused" : row.failing ? "failing" : "ok");

/** `Retry-After` as seconds from now: a number of seconds or an HTTP date; null when absent or unreadable. */
export function retryAfterSeconds(value: string | undefined, nowMs = Date.now()): number | null {
  if (value === undefined) return null;
  const trimmed = value.trim();
  if (/^\d{1,10}$/.test(trimmed)) return Number(trimmed);
  const at = Date.parse(trimmed);
  return Number.isNaN(at) ? null : Math.max(0, Math.ceil((at - nowMs) / 1000));
}
