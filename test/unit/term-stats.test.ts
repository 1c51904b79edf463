import { describe, expect, it } from "vitest";
import { TERM_STATS_CACHE_FROM, TermStats } from "../../src/store/sql/term-stats.js";

describe("BM25's corpus statistics", () => {
  it("count every word on every search while the index is small", async () => {
    const stats = new TermStats();
    const counted: string[] = [];
    const count = (word: string): Promise<number> => {
      counted.push(word);
      return Promise.resolve(3);
    };
    await stats.frequencies(TERM_STATS_CACHE_FROM - 1, ["deploy", "friday"], count);
    await stats.frequencies(TERM_STATS_CACHE_FROM - 1, ["deploy"], count);
    expect(counted).toEqual(["deploy", "friday", "deploy"]);
  });

  it("reuse a word's count once the index is large, and count only the new words", async () => {
    const stats = new TermStats();
    const counted: string[] = [];
    const count = (word: string): Promise<number> => {
      counted.push(word);
      return Promise.resolve(word.length);
    };
    const first = await stats.frequencies(TERM_STATS_CACHE_FROM, ["deploy", "friday"], count);
    const second = await stats.frequencies(TERM_STATS_CACHE_FROM, ["friday", "release"], count);
    expect(counted).toEqual(["deploy", "friday", "release"]);
    expect([...first]).toEqual([
      ["deploy", 6],
      ["friday", 6],
    ]);
    expect([...second]).toEqual([
      ["friday", 6],
      ["release", 7],
    ]);
  });

  it("count the corpus again while it is small, and keep a large one's size", async () => {
    const stats = new TermStats();
    let counts = 0;
    let documents = 10;
    const count = (): Promise<{ documents: number; averageLength: number }> => {
      counts++;
      return Promise.resolve({ documents, averageLength: 5 });
    };
    expect((await stats.corpusSize(count)).documents).toBe(10);
    documents = TERM_STATS_CACHE_FROM;
    expect((await stats.corpusSize(count)).documents).toBe(TERM_STATS_CACHE_FROM);
    documents = TERM_STATS_CACHE_FROM + 500;
    expect((await stats.corpusSize(count)).documents).toBe(TERM_STATS_CACHE_FROM);
    expect(counts).toBe(2);
  });
});
