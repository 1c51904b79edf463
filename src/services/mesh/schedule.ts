import type { MeshLinkRow } from "../../store/mesh.js";

/** Syncs failed in a row after which a link is `failing`. */
export const FAILURES_TO_FAIL = 3;
/** The longest a failing link waits between syncs (CONTRACT §16). */
export const MAX_BACKOFF_SECONDS = 3600;
/** How long a sync holds its claim on a link before another server may take it (extended per page). */
export const SYNC_LEASE_SECONDS = 300;

/**
 * Seconds to the next sync: the link's interval after a success, doubled per failure in a row up to
 * an hour; ±10 % jitter, so links made together (or servers restarted together) drift apart
 * rather than calling their peers in step.
 */
export function nextSyncDelaySeconds(row: Pick<MeshLinkRow, "interval_seconds">, failures: number, random = Math.random): number {
  const jittered = (seconds: number): number => Math.max(1, Math.round(seconds * (0.9 + 0.2 * random())));
  if (failures === 0) return jittered(row.interval_seconds);
  return Math.min(jittered(row.interval_seconds * 2 ** Math.min(failures, 20)), MAX_BACKOFF_SECONDS);
}
