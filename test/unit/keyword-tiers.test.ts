import { describe, expect, it } from "vitest";
import { MAX_ALL_BUT_ONE_WORDS, candidateTiers, newestOrder } from "../../src/store/postgres/keyword-tiers.js";

const queries = (...words: string[]): Map<string, string> => new Map(words.map((word) => [word, `'${word}'`]));

describe("candidateTiers: where PostgreSQL's keyword search looks for candidates", () => {
  it("looks first among the entries holding every word, then those missing one, then those holding the rarest", () => {
    const frequencies = new Map([
      ["deploy", 5000],
      ["rollback", 3],
      ["canary", 40],
    ]);
    expect(candidateTiers(frequencies, queries("deploy", "rollback", "canary"), ["rollback", "canary"])).toEqual([
      { queries: ["('rollback') & ('canary') & ('deploy')"], words: ["rollback", "canary", "deploy"], holds: "all" },
      {
        queries: ["('canary') & ('deploy')", "('rollback') & ('deploy')", "('rollback') & ('canary')"],
        words: ["rollback", "canary", "deploy"],
        holds: "allButOne",
      },
      { queries: ["('rollback') | ('canary')"], words: ["rollback", "canary"], holds: "any" },
    ]);
  });

  it("leaves out the words no entry holds", () => {
    const frequencies = new Map([
      ["deploy", 5000],
      ["happen", 0],
      ["rollback", 3],
    ]);
    expect(candidateTiers(frequencies, queries("deploy", "happen", "rollback"), ["rollback"])).toEqual([
      { queries: ["('rollback') & ('deploy')"], words: ["rollback", "deploy"], holds: "all" },
      { queries: ["('rollback')"], words: ["rollback"], holds: "any" },
    ]);
  });

  it("scores every entry holding any word when the rarest words are all the words", () => {
    const frequencies = new Map([
      ["deploy", 900],
      ["rollback", 3],
      ["canary", 40],
    ]);
    expect(candidateTiers(frequencies, queries("deploy", "rollback", "canary"), ["rollback", "canary", "deploy"])).toEqual([
      { queries: ["('rollback') | ('canary') | ('deploy')"], words: ["rollback", "canary", "deploy"], holds: "any" },
    ]);
  });

  it("asks one tier for one word, and none when no entry holds any", () => {
    expect(candidateTiers(new Map([["deploy", 9000]]), queries("deploy"), ["deploy"])).toEqual([{ queries: ["('deploy')"], words: ["deploy"], holds: "any" }]);
    expect(candidateTiers(new Map([["deploy", 0]]), queries("deploy"), [])).toEqual([]);
  });

  it(`skips "all but one" above ${MAX_ALL_BUT_ONE_WORDS} words`, () => {
    const words = Array.from({ length: MAX_ALL_BUT_ONE_WORDS + 1 }, (_, index) => `w${index}`);
    const tiers = candidateTiers(new Map(words.map((word, index) => [word, (index + 1) * 1000])), queries(...words), ["w0"]);
    expect(tiers.map((tier) => tier.queries)).toEqual([[words.map((word) => `('${word}')`).join(" & ")], ["('w0')"]]);
  });
});

describe("newestOrder: how a tier's newest candidates are found", () => {
  const frequencies = new Map([
    ["deploy", 40_000],
    ["test", 30_000],
    ["rollback", 2_000],
  ]);
  const walk = "m.pk DESC";
  const bitmap = "m.pk + 0 DESC";
  it("lets the planner walk the primary key backwards for a tier its words' counts say is common", () => {
    expect(newestOrder({ queries: ["('deploy')"], words: ["deploy"], holds: "any" }, frequencies, 100_000)).toBe(walk);
    expect(newestOrder({ queries: ["('rollback') | ('deploy')"], words: ["rollback", "deploy"], holds: "any" }, frequencies, 100_000)).toBe(walk);
    // 40 % × 30 %: 12 % if the words are independent, more if they go together.
    expect(newestOrder({ queries: ["('deploy') & ('test')"], words: ["deploy", "test"], holds: "all" }, frequencies, 100_000)).toBe(walk);
  });
  it("leaves the GIN bitmap and a sort for every other tier", () => {
    expect(newestOrder({ queries: ["('rollback')"], words: ["rollback"], holds: "any" }, frequencies, 100_000)).toBe(bitmap);
    expect(newestOrder({ queries: ["('deploy')"], words: ["deploy"], holds: "all" }, frequencies, 500_000)).toBe(bitmap);
    expect(newestOrder({ queries: ["('deploy') & ('rollback')"], words: ["deploy", "rollback"], holds: "all" }, frequencies, 100_000)).toBe(bitmap);
    expect(newestOrder({ queries: ["('deploy') & ('test')", "('deploy') & ('rollback')", "('test') & ('rollback')"], words: ["deploy", "test", "rollback"], holds: "allButOne" }, frequencies, 100_000)).toBe(bitmap);
  });
});
