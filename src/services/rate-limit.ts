import { AppError } from "../core/errors.js";
import { IdleTable } from "../core/idle-table.js";
import type { SharedRateLimits } from "../store/store.js";

interface Bucket {
  tokens: number;
  updatedMs: number;
}

/** Buckets kept at most; a bucket that has refilled is idle and the first to go. */
const RATE_LIMIT_CAPACITY = 10_000;

/**
 * Per-agent token bucket: `perMinute` requests a minute, bursts up to the same number. In memory
 * where this process is the only server; in the store where several share it, so an agent's
 * limit is one limit however its requests are spread over them.
 */
export class RateLimiter {
  private readonly buckets: IdleTable<Bucket>;

  constructor(
    private readonly perMinute: number,
    capacity = RATE_LIMIT_CAPACITY,
    private readonly shared?: SharedRateLimits,
  ) {
    // A full bucket is the same as no bucket at all.
    this.buckets = new IdleTable(capacity, (bucket, nowMs) => this.refilled(bucket, nowMs) >= this.perMinute);
  }

  /** Buckets currently remembered. */
  get size(): number {
    return this.buckets.size;
  }

  private refilled(bucket: Bucket, nowMs: number): number {
    return Math.min(this.perMinute, bucket.tokens + ((nowMs - bucket.updatedMs) * this.perMinute) / 60_000);
  }

  async take(key: string, nowMs = Date.now()): Promise<void> {
    if (this.perMinute <= 0) return;
    if (this.shared) {
      const taken = await this.shared.take(key, this.perMinute, nowMs);
      if (!taken.allowed) throw new AppError("RATE_LIMITED", "rate limit exceeded", { retryAfter: taken.retryAfterSeconds });
      return;
    }
    const ratePerMs = this.perMinute / 60_000;
    const known = this.buckets.get(key);
    const bucket = { tokens: known ? this.refilled(known, nowMs) : this.perMinute, updatedMs: nowMs };
    if (bucket.tokens < 1) {
      this.buckets.set(key, bucket, nowMs);
      const retryAfter = Math.ceil((1 - bucket.tokens) / ratePerMs / 1000);
      throw new AppError("RATE_LIMITED", "rate limit exceeded", { retryAfter });
    }
    bucket.tokens -= 1;
    this.buckets.set(key, bucket, nowMs);
  }

  /** Forgets refilled buckets (a job calls it every minute). */
  sweep(nowMs = Date.now()): number {
    return this.buckets.sweep(nowMs);
  }
}
