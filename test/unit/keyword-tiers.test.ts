import { describe, expect, it } from "vitest";
import { MAX_ALL_BUT_ONE_WORDS, candidateTiers } from "../../src/store/postgres/keyword-tiers.js";

const queries = (...words: string[]): Map<string, string> => new Map(words.map((word) => [word, `'${word}'`]));

describe("candidateTiers: where PostgreSQL's keyword search looks for candidates", () => {
  it("looks first among the entries holding every word, then those missing one, then those holding the rarest", () => {
    const frequencies = new Map([
      ["deploy", 5000],
      ["rollback", 3],
      ["canary", 40],
    ]);
    expect(candidateTiers(frequencies, queries("deploy", "rollback", "canary"), ["rollback", "canary"])).toEqual([
      { query: "('rollback') & ('canary') & ('deploy')", better: null },
      { query: "(('canary') & ('deploy')) | (('rollback') & ('deploy')) | (('rollback') & ('canary'))", better: "('rollback') & ('canary') & ('deploy')" },
      { query: "('rollback') | ('canary')", better: "(('canary') & ('deploy')) | (('rollback') & ('deploy')) | (('rollback') & ('canary'))" },
    ]);
  });

  it("leaves out the words no entry holds", () => {
    const frequencies = new Map([
      ["deploy", 5000],
      ["happen", 0],
      ["rollback", 3],
    ]);
    expect(candidateTiers(frequencies, queries("deploy", "happen", "rollback"), ["rollback"])).toEqual([
      { query: "('rollback') & ('deploy')", better: null },
      { query: "('rollback')", better: "('rollback') & ('deploy')" },
    ]);
  });

  it("scores every entry holding any word when the rarest words are all the words", () => {
    const frequencies = new Map([
      ["deploy", 900],
      ["rollback", 3],
      ["canary", 40],
    ]);
    expect(candidateTiers(frequencies, queries("deploy", "rollback", "canary"), ["rollback", "canary", "deploy"])).toEqual([
      { query: "('rollback') | ('canary') | ('deploy')", better: null },
    ]);
  });

  it("asks one tier for one word, and none when no entry holds any", () => {
    expect(candidateTiers(new Map([["deploy", 9000]]), queries("deploy"), ["deploy"])).toEqual([{ query: "('deploy')", better: null }]);
    expect(candidateTiers(new Map([["deploy", 0]]), queries("deploy"), [])).toEqual([]);
  });

  it(`skips "all but one" above ${MAX_ALL_BUT_ONE_WORDS} words`, () => {
    const words = Array.from({ length: MAX_ALL_BUT_ONE_WORDS + 1 }, (_, index) => `w${index}`);
    const tiers = candidateTiers(new Map(words.map((word, index) => [word, (index + 1) * 1000])), queries(...words), ["w0"]);
    expect(tiers.map((tier) => tier.query)).toEqual([words.map((word) => `('${word}')`).join(" & "), "('w0')"]);
  });
});
