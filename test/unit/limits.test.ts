import { describe, expect, it } from "vitest";
import { AppError } from "../../src/core/errors.js";
import { IdleTable } from "../../src/core/idle-table.js";
import { RateLimiter } from "../../src/services/rate-limit.js";
import { clientKey, FailureThrottle, FAILURES_PER_MINUTE } from "../../src/services/throttle.js";

/** The error a call rejects with, or undefined. */
async function thrown(run: () => Promise<void>): Promise<AppError | undefined> {
  try {
    await run();
    return undefined;
  } catch (error) {
    if (error instanceof AppError) return error;
    throw error;
  }
}

describe("IdleTable", () => {
  it("drops idle entries first when full, then the least recently used", () => {
    const table = new IdleTable<{ idle: boolean }>(3, (value) => value.idle);
    table.set("a", { idle: false }, 0);
    table.set("b", { idle: true }, 0);
    table.set("c", { idle: false }, 0);
    table.set("d", { idle: false }, 0);
    expect(table.size).toBe(3);
    expect(table.get("b")).toBeUndefined();
    // Nothing idle: "a" was used least recently... until it is used again.
    table.set("a", { idle: false }, 0);
    table.set("e", { idle: false }, 5000);
    expect(table.get("c")).toBeUndefined();
    expect(["a", "d", "e"].map((key) => table.get(key) !== undefined)).toEqual([true, true, true]);
  });

  it("sweeps idle entries on demand", () => {
    const table = new IdleTable<number>(10, (value, nowMs) => nowMs - value >= 100);
    for (let index = 0; index < 5; index++) table.set(`k${index}`, index * 50, index * 50);
    expect(table.sweep(250)).toBe(4);
    expect(table.size).toBe(1);
    expect(table.get("k4")).toBe(200);
  });

  it("never grows past its capacity", () => {
    const table = new IdleTable<number>(100, () => false);
    for (let index = 0; index < 10_000; index++) table.set(`k${index}`, index, index);
    expect(table.size).toBe(100);
  });
});

describe("FailureThrottle", () => {
  it("refuses an identity from an address after twenty failures in a minute, until the oldest is a minute old", async () => {
    const throttle = new FailureThrottle();
    for (let index = 0; index < FAILURES_PER_MINUTE; index++) {
      expect(await thrown(() => throttle.check("10.0.0.1", "alice", 1000 + index))).toBeUndefined();
      await throttle.fail("10.0.0.1", "alice", 1000 + index);
    }
    const refused = await thrown(() => throttle.check("10.0.0.1", "alice", 2000));
    expect(refused?.code).toBe("RATE_LIMITED");
    expect(refused?.retryAfter).toBe(59);
    // Another identity, another address: unaffected.
    expect(await thrown(() => throttle.check("10.0.0.1", "bob", 2000))).toBeUndefined();
    expect(await thrown(() => throttle.check("10.0.0.2", "alice", 2000))).toBeUndefined();
    // A minute after the first failure, one more attempt is allowed.
    expect(await thrown(() => throttle.check("10.0.0.1", "alice", 61_000))).toBeUndefined();
  });

  it("counts only UNAUTHENTICATED failures of a guarded attempt", async () => {
    const throttle = new FailureThrottle();
    for (let index = 0; index < 30; index++) {
      await expect(
        throttle.guard("10.0.0.1", "alice", () => {
          throw new AppError("NOT_FOUND", "not this");
        }),
      ).rejects.toThrow("not this");
    }
    expect(throttle.size).toBe(0);
    await expect(
      throttle.guard("10.0.0.1", "alice", () => Promise.reject(new AppError("UNAUTHENTICATED", "invalid credentials"))),
    ).rejects.toThrow("invalid credentials");
    expect(throttle.size).toBe(1);
  });

  it("forgets a pair a minute after its last failure, and stays within its capacity", async () => {
    const throttle = new FailureThrottle(50);
    for (let index = 0; index < 500; index++) await throttle.fail("10.0.0.1", `id-${index}`, index);
    expect(throttle.size).toBe(50);
    expect(throttle.sweep(449 + 59_999)).toBe(0);
    expect(throttle.sweep(499 + 60_000)).toBe(50);
    expect(throttle.size).toBe(0);
  });

  it("counts an IPv6 client by its /64 and an IPv4-mapped one as IPv4", () => {
    expect(clientKey("2001:db8:1:2:aaaa::1")).toBe(clientKey("2001:db8:1:2:bbbb::9"));
    expect(clientKey("2001:db8:1:2::1")).not.toBe(clientKey("2001:db8:1:3::1"));
    expect(clientKey("::ffff:127.0.0.1")).toBe("127.0.0.1");
    expect(clientKey(undefined)).toBe("unknown");
  });
});

describe("RateLimiter", () => {
  it("forgets a bucket once it has refilled", async () => {
    const limiter = new RateLimiter(60);
    await limiter.take("alice", 0);
    await limiter.take("bob", 0);
    expect(limiter.size).toBe(2);
    expect(limiter.sweep(500)).toBe(0);
    expect(limiter.sweep(1000)).toBe(2);
    expect(limiter.size).toBe(0);
  });

  it("stays within its capacity", async () => {
    const limiter = new RateLimiter(600, 20);
    for (let index = 0; index < 1000; index++) await limiter.take(`agent-${index}`, index);
    expect(limiter.size).toBe(20);
  });
});
