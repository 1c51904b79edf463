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

  it("reuse counts from the backend's own size on, when it gives one", async () => {
    const stats = new TermStats({ cacheFrom: 1_000 });
    const counted: string[] = [];
    const count = (word: string): Promise<number> => {
      counted.push(word);
      return Promise.resolve(3);
    };
    await stats.frequencies(999, ["deploy"], count);
    await stats.frequencies(999, ["deploy"], count);
    await stats.frequencies(1_000, ["deploy"], count);
    await stats.frequencies(1_000, ["deploy"], count);
    expect(counted).toEqual(["deploy", "deploy", "deploy"]);
    let corpusCounts = 0;
    const corpus = (): Promise<{ documents: number; averageLength: number }> => {
      corpusCounts++;
      return Promise.resolve({ documents: 1_000, averageLength: 5 });
    };
    await stats.corpusSize(corpus);
    await stats.corpusSize(corpus);
    expect(corpusCounts).toBe(1);
  });

  it("count again a word no entry held, however large the index: an entry may have been written with it since", async () => {
    for (const refresh of ["request", "background"] as const) {
      const stats = new TermStats({ refresh });
      const counted: string[] = [];
      let holding = 0;
      const count = (word: string): Promise<number> => {
        counted.push(word);
        return Promise.resolve(word === "zeppelin" ? holding : 4);
      };
      expect([...(await stats.frequencies(TERM_STATS_CACHE_FROM, ["zeppelin", "deploy"], count))]).toEqual([
        ["zeppelin", 0],
        ["deploy", 4],
      ]);
      holding = 1;
      expect([...(await stats.frequencies(TERM_STATS_CACHE_FROM, ["zeppelin", "deploy"], count))]).toEqual([
        ["zeppelin", 1],
        ["deploy", 4],
      ]);
      // Once an entry holds it, its count is reused like any other.
      await stats.frequencies(TERM_STATS_CACHE_FROM, ["zeppelin"], count);
      expect(counted).toEqual(["zeppelin", "deploy", "zeppelin"]);
    }
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

describe("BM25's corpus statistics refreshed in the background", () => {
  const minute = 60_000;

  it("answer a large index's stale count at once and count it again after the search", async () => {
    let nowMs = 0;
    const stats = new TermStats({ refresh: "background", now: () => nowMs });
    let documents = 3;
    const later: boolean[] = [];
    const count = (_word: string, inBackground: boolean): Promise<number> => {
      later.push(inBackground);
      return Promise.resolve(documents);
    };
    await stats.frequencies(TERM_STATS_CACHE_FROM, ["deploy"], count);
    nowMs += minute;
    documents = 5;
    expect([...(await stats.frequencies(TERM_STATS_CACHE_FROM, ["deploy"], count))]).toEqual([["deploy", 3]]);
    await new Promise((resolve) => setImmediate(resolve));
    expect([...(await stats.frequencies(TERM_STATS_CACHE_FROM, ["deploy"], count))]).toEqual([["deploy", 5]]);
    expect(later).toEqual([false, true]);
  });

  it("count a word never counted before the search goes on, and several at once", async () => {
    const stats = new TermStats({ refresh: "background" });
    const pending: ((documents: number) => void)[] = [];
    const count = (): Promise<number> => new Promise((resolve) => pending.push(resolve));
    const found = stats.frequencies(TERM_STATS_CACHE_FROM, ["deploy", "friday"], count);
    // Both counts were asked for before either answered.
    expect(pending).toHaveLength(2);
    pending.forEach((resolve, index) => resolve(index + 1));
    expect([...(await found)]).toEqual([
      ["deploy", 1],
      ["friday", 2],
    ]);
  });

  it("keep the old count when counting again fails, and try again on a later search", async () => {
    let nowMs = 0;
    const stats = new TermStats({ refresh: "background", now: () => nowMs });
    let fail = false;
    const count = (): Promise<number> => (fail ? Promise.reject(new Error("connection lost")) : Promise.resolve(7));
    await stats.frequencies(TERM_STATS_CACHE_FROM, ["deploy"], count);
    nowMs += minute;
    fail = true;
    expect([...(await stats.frequencies(TERM_STATS_CACHE_FROM, ["deploy"], count))]).toEqual([["deploy", 7]]);
    await new Promise((resolve) => setImmediate(resolve));
    fail = false;
    let counted = 0;
    await stats.frequencies(TERM_STATS_CACHE_FROM, ["deploy"], () => {
      counted++;
      return Promise.resolve(9);
    });
    expect(counted).toBe(1);
  });

  it("answer a large corpus's stale size at once, count it once however many searches find it stale, and keep counting a small one first", async () => {
    let nowMs = 0;
    const stats = new TermStats({ refresh: "background", now: () => nowMs });
    let documents = TERM_STATS_CACHE_FROM - 1;
    let counts = 0;
    let release: () => void = () => undefined;
    const count = (inBackground: boolean): Promise<{ documents: number; averageLength: number }> => {
      counts++;
      const value = { documents, averageLength: 5 };
      return inBackground ? new Promise((resolve) => (release = () => resolve(value))) : Promise.resolve(value);
    };
    expect((await stats.corpusSize(count)).documents).toBe(TERM_STATS_CACHE_FROM - 1);
    documents = TERM_STATS_CACHE_FROM;
    expect((await stats.corpusSize(count)).documents).toBe(TERM_STATS_CACHE_FROM);
    nowMs += minute;
    documents = TERM_STATS_CACHE_FROM + 500;
    expect((await stats.corpusSize(count)).documents).toBe(TERM_STATS_CACHE_FROM);
    expect((await stats.corpusSize(count)).documents).toBe(TERM_STATS_CACHE_FROM);
    expect(counts).toBe(3);
    release();
    await new Promise((resolve) => setImmediate(resolve));
    expect((await stats.corpusSize(count)).documents).toBe(TERM_STATS_CACHE_FROM + 500);
    expect(counts).toBe(3);
  });
});
