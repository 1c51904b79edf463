import { randomBytes } from "node:crypto";
import { describe, expect, it } from "vitest";
import { hostSlug } from "../../src/core/config.js";
import { open, seal } from "../../src/core/secret-box.js";

describe("sealed secrets (AES-256-GCM)", () => {
  const key = randomBytes(32);

  it("open what they sealed, with a fresh nonce each time", () => {
    const one = seal(key, "a peer's token");
    const two = seal(key, "a peer's token");
    expect(one).not.toBe(two);
    expect(one).not.toContain("token");
    expect(open(key, one)).toBe("a peer's token");
    expect(open(key, two)).toBe("a peer's token");
    expect(open(key, seal(key, ""))).toBe("");
  });

  it("open to nothing under another key, altered, truncated or unmarked", () => {
    const sealed = seal(key, "secret");
    expect(open(randomBytes(32), sealed)).toBeNull();
    const raw = Buffer.from(sealed.slice(3), "base64");
    raw[raw.length - 1] = (raw[raw.length - 1] ?? 0) ^ 1;
    expect(open(key, `v1:${raw.toString("base64")}`)).toBeNull();
    expect(open(key, sealed.slice(0, 12))).toBeNull();
    expect(open(key, sealed.slice(3))).toBeNull();
  });
});

describe("the default instance name", () => {
  it.each([
    ["build-box-7", "build-box-7"],
    ["Laptop.Local.", "laptop-local"],
    ["--weird__host--", "weird-host"],
    ["x".repeat(80), "x".repeat(63)],
    ["...", "cairn"],
  ])("of host %s is %s", (host, slug) => {
    expect(hostSlug(host)).toBe(slug);
  });
});
