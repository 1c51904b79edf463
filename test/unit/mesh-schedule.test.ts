import { describe, expect, it } from "vitest";
import { MAX_BACKOFF_SECONDS, nextSyncDelaySeconds } from "../../src/services/mesh/schedule.js";

// CONTRACT §16: a jittered schedule, exponential back-off on failure, never past an hour.

describe("a link's next sync", () => {
  const link = { interval_seconds: 300 };

  it("is its interval after a success, within ±10 %", () => {
    expect(nextSyncDelaySeconds(link, 0, () => 0)).toBe(270);
    expect(nextSyncDelaySeconds(link, 0, () => 0.5)).toBe(300);
    expect(nextSyncDelaySeconds(link, 0, () => 1)).toBe(330);
  });

  it("doubles per failure in a row", () => {
    expect(nextSyncDelaySeconds(link, 1, () => 0.5)).toBe(600);
    expect(nextSyncDelaySeconds(link, 2, () => 0.5)).toBe(1200);
    expect(nextSyncDelaySeconds(link, 3, () => 0.5)).toBe(2400);
  });

  it("never waits more than an hour, however long the failures go on or the interval is", () => {
    for (const failures of [4, 10, 50, 1000]) expect(nextSyncDelaySeconds(link, failures, () => 1)).toBe(MAX_BACKOFF_SECONDS);
    expect(nextSyncDelaySeconds({ interval_seconds: 86_400 }, 1, () => 0)).toBe(MAX_BACKOFF_SECONDS);
  });
});
