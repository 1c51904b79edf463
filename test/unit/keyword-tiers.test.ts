import { describe, expect, it } from "vitest";
import { MAX_ALL_BUT_ONE_WORDS, candidateTiers } from "../../src/store/postgres/keyword-tiers.js";
import { newestOrder } from "../../src/store/postgres/keywords.js";

const queries = (...words: string[]): Map<string, string> => new Map(words.map((word) => [word, `'${word}'`]));

describe("candidateTiers: where PostgreSQL's keyword search looks for candidates", () => {
  it("looks first among the entries holding every word, then those missing one, then those holding the rarest", () => {
    const frequencies = new Map([
      ["deploy", 5000],
      ["rollback", 3],
      ["canary", 40],
    ]);
    expect(candidateTiers(frequencies, queries("deploy", "rollback", "canary"), ["rollback", "canary"])).toEqual([
      { query: "('rollback') & ('canary') & ('deploy')", word: null },
      { query: "(('canary') & ('deploy')) | (('rollback') & ('deploy')) | (('rollback') & ('canary'))", word: null },
      { query: "('rollback') | ('canary')", word: null },
    ]);
  });

  it("leaves out the words no entry holds", () => {
    const frequencies = new Map([
      ["deploy", 5000],
      ["happen", 0],
      ["rollback", 3],
    ]);
    expect(candidateTiers(frequencies, queries("deploy", "happen", "rollback"), ["rollback"])).toEqual([
      { query: "('rollback') & ('deploy')", word: null },
      { query: "('rollback')", word: "rollback" },
    ]);
  });

  it("scores every entry holding any word when the rarest words are all the words", () => {
    const frequencies = new Map([
      ["deploy", 900],
      ["rollback", 3],
      ["canary", 40],
    ]);
    expect(candidateTiers(frequencies, queries("deploy", "rollback", "canary"), ["rollback", "canary", "deploy"])).toEqual([
      { query: "('rollback') | ('canary') | ('deploy')", word: null },
    ]);
  });

  it("asks one tier for one word, and none when no entry holds any", () => {
    expect(candidateTiers(new Map([["deploy", 9000]]), queries("deploy"), ["deploy"])).toEqual([{ query: "('deploy')", word: "deploy" }]);
    expect(candidateTiers(new Map([["deploy", 0]]), queries("deploy"), [])).toEqual([]);
  });

  it(`skips "all but one" above ${MAX_ALL_BUT_ONE_WORDS} words`, () => {
    const words = Array.from({ length: MAX_ALL_BUT_ONE_WORDS + 1 }, (_, index) => `w${index}`);
    const tiers = candidateTiers(new Map(words.map((word, index) => [word, (index + 1) * 1000])), queries(...words), ["w0"]);
    expect(tiers).toEqual([
      { query: words.map((word) => `('${word}')`).join(" & "), word: null },
      { query: "('w0')", word: "w0" },
    ]);
  });
});

describe("newestOrder: how a tier's newest candidates are found", () => {
  const frequencies = new Map([
    ["deploy", 12_000],
    ["rollback", 2_000],
  ]);
  it("lets the planner walk the primary key backwards for one common word", () => {
    expect(newestOrder({ query: "('deploy')", word: "deploy" }, frequencies, 100_000)).toBe("m.pk DESC");
  });
  it("orders by an expression no index gives for a word under a tenth of the entries, and for every tier of several words", () => {
    expect(newestOrder({ query: "('rollback')", word: "rollback" }, frequencies, 100_000)).toBe("m.pk + 0 DESC");
    expect(newestOrder({ query: "('deploy')", word: "deploy" }, frequencies, 200_000)).toBe("m.pk + 0 DESC");
    expect(newestOrder({ query: "('deploy') & ('rollback')", word: null }, frequencies, 100_000)).toBe("m.pk + 0 DESC");
  });
});
