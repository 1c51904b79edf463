import { rmSync } from "node:fs";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import type { NewMemoryRow } from "../../src/store/memory.js";
import { MAX_KEYWORD_CANDIDATES, selectiveTerms } from "../../src/store/sql/term-stats.js";
import { fts5Query } from "../../src/store/sqlite/keywords.js";
import { SqliteStore } from "../../src/store/sqlite/store.js";
import { connectionOf } from "../../src/store/sqlite/transactions.js";
import { newMemoryRow } from "../helpers/memory-rows.js";
import { tempDir } from "../helpers/server.js";

const row = (content: string): NewMemoryRow => newMemoryRow(content);

describe("selectiveTerms: the words whose entries keyword search scores", () => {
  it("takes the rarest words while their entries add up to the bound, and always the rarest", () => {
    expect(selectiveTerms(new Map([["common", 5000], ["rare", 3], ["middling", MAX_KEYWORD_CANDIDATES - 3], ["absent", 0]]))).toEqual(["rare", "middling"]);
    expect(selectiveTerms(new Map([["common", 5000], ["commoner", 9000]]))).toEqual(["common"]);
    expect(selectiveTerms(new Map([["absent", 0]]))).toEqual([]);
  });
});

describe("SQLite keyword search over a common word", () => {
  const dirs: string[] = [];
  afterEach(() => {
    for (const dir of dirs.splice(0)) rmSync(dir, { recursive: true, force: true });
  });

  it("scores the entries holding the rarer words exactly as FTS5 ranks the whole query, and only those", async () => {
    const dir = tempDir();
    dirs.push(dir);
    const store = SqliteStore.open(join(dir, "cairn.db"));
    try {
      const common = Array.from({ length: MAX_KEYWORD_CANDIDATES + 200 }, (_, index) => `deploy note ${index} about the staging cluster`);
      const rare = ["deploy rollback after the canary failed", "rollback the deploy, then rollback the schema", "a rollback plan for deploy day"];
      await store.transaction(async (tx) => {
        for (const content of [...common.slice(0, 600), ...rare, ...common.slice(600)]) await store.memory.insert(tx, row(content), []);
      });
      const viewpoint = { agentId: "reader", allProjects: false };
      const words = ["rollback", "deploy"];
      const found = await store.keywords.search(store.reader, viewpoint, new Date().toISOString(), words, {}, 5);
      // FTS5's own ranking of the whole query over every matching row.
      const exact = connectionOf(store.reader).all<{ pk: number; score: number }>(
        "SELECT rowid AS pk, -rank AS score FROM memory_fts WHERE memory_fts MATCH ? ORDER BY rank, rowid LIMIT 5",
        fts5Query(words),
      );
      // The three holding "rollback" are the candidates; entries with only the common word are not.
      expect(found.hits.map((hit) => hit.pk)).toEqual(exact.slice(0, 3).map((hit) => hit.pk));
      found.hits.forEach((hit, index) => expect(hit.score).toBeCloseTo(exact[index]?.score ?? Number.NaN, 9));
    } finally {
      await store.close();
    }
  });
});
