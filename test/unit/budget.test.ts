import { describe, expect, it } from "vitest";
import { packByTokens } from "../../src/services/budget.js";
import { tokensOf } from "../../src/core/tokens.js";
import { ageOf, compactEntry } from "../../src/services/compact-entries.js";

// Issue 26: what an agent reads fits a budget, best first, nothing cut, the rest counted; and a
// hit's compact form says enough to decide whether to read the whole entry.

const item = (n: number, chars: number) => ({ n, text: "x".repeat(chars) });

describe("packing by tokens", () => {
  const items = [item(1, 100), item(2, 400), item(3, 40), item(4, 40)];

  it("never goes over, never cuts an item, and counts what is left out", () => {
    for (let budget = 1; budget < 200; budget++) {
      for (const mode of ["skip", "prefix"] as const) {
        const packed = packByTokens(items, budget, mode);
        expect(tokensOf(packed.kept), `${mode} ${budget}`).toBeLessThanOrEqual(Math.max(budget, 1));
        expect(packed.kept.length + packed.leftOut).toBe(items.length);
        for (const kept of packed.kept) expect(items).toContain(kept);
        expect(packed.tokens).toBe(tokensOf(packed.kept));
      }
    }
  });

  it("skips what does not fit and takes smaller items after it, or stops there for a prefix", () => {
    expect(packByTokens(items, 60, "skip").kept.map((entry) => entry.n)).toEqual([1, 3, 4]);
    expect(packByTokens(items, 60, "prefix").kept.map((entry) => entry.n)).toEqual([1]);
    expect(packByTokens(items, 60, "prefix").leftOut).toBe(3);
    expect(packByTokens(items, 1_000, "prefix").kept).toHaveLength(4);
  });
});

describe("the compact form of an entry", () => {
  const at = "2026-12-02T10:00:00.000Z";
  const nowMs = Date.parse(at);
  const entry = (content: string, headline: string | null = null) => ({ id: "0f3c2a1e-5b6c-4d7e-8f90-a1b2c3d4e5f6", type: "memory" as const, headline, content, updated_at: at });

  it("is the whole of a one-line note, as its headline", () => {
    expect(compactEntry(entry("Deploys go out on Tuesdays."), "deploys", 0.8, nowMs)).toEqual({
      id: "0f3c2a1e-5b6c-4d7e-8f90-a1b2c3d4e5f6",
      type: "memory",
      score: 0.8,
      age: "now",
      headline: "Deploys go out on Tuesdays.",
    });
  });

  it("takes the first line as headline and shows the words around the match from the rest", () => {
    const content = "Checkout service notes\n" + "The basket is kept in the session. ".repeat(6) + "Refunds above 500 euros need a second approval from finance. " + "Tax is computed per line. ".repeat(6);
    const hit = compactEntry(entry(content), "who approves large refunds", null, nowMs);
    expect(hit.headline).toBe("Checkout service notes");
    expect(hit.snippet).toMatch(/^….*Refunds above 500 euros need a second approval/);
    expect([...(hit.snippet ?? "")].length).toBeLessThanOrEqual(84);
    expect(hit).not.toHaveProperty("score");
  });

  it("prefers the entry's own headline, and cuts a long line at a word with an ellipsis", () => {
    const long = "word ".repeat(60).trim();
    const titled = compactEntry(entry(long, "A headline"), "word", 1, nowMs);
    expect(titled.headline).toBe("A headline");
    expect(titled.snippet).toMatch(/^word word .*…$/);
    const untitled = compactEntry(entry(long), "word", 1, nowMs);
    expect(untitled.headline).toMatch(/^(word ){10,}word…$/);
    expect([...untitled.headline].length).toBeLessThanOrEqual(64);
    expect(untitled.snippet?.startsWith("…")).toBe(true);
  });

  it("says an age in the largest unit that fits", () => {
    const ago = (seconds: number) => ageOf(new Date(nowMs - seconds * 1000).toISOString(), nowMs);
    expect([ago(5), ago(90), ago(3 * 3600), ago(2 * 86_400), ago(15 * 86_400), ago(65 * 86_400), ago(800 * 86_400)]).toEqual(["now", "1m", "3h", "2d", "2w", "2mo", "2y"]);
  });
});
