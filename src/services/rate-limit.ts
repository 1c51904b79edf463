import { AppError } from "../core/errors.js";

interface Bucket {
  tokens: number;
  updatedMs: number;
}

/** Per-agent token bucket: `perMinute` requests a minute, bursts up to the same number. */
export class RateLimiter {
  private readonly buckets = new Map<string, Bucket>();

  constructor(private readonly perMinute: number) {}

  take(agentId: string, nowMs = Date.now()): void {
    if (this.perMinute <= 0) return;
    const ratePerMs = this.perMinute / 60_000;
    const bucket = this.buckets.get(agentId) ?? { tokens: this.perMinute, updatedMs: nowMs };
    bucket.tokens = Math.min(this.perMinute, bucket.tokens + (nowMs - bucket.updatedMs) * ratePerMs);
    bucket.updatedMs = nowMs;
    this.buckets.set(agentId, bucket);
    if (bucket.tokens < 1) {
      const retryAfter = Math.ceil((1 - bucket.tokens) / ratePerMs / 1000);
      throw new AppError("RATE_LIMITED", "rate limit exceeded", { retryAfter });
    }
    bucket.tokens -= 1;
  }
}
