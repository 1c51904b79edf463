import { rmSync } from "node:fs";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { openStore } from "../../src/store/open.js";
import { BM25_B, BM25_K1, bm25Idf } from "../../src/store/memory.js";
import { MAX_KEYWORD_CANDIDATES, TERM_STATS_CACHE_FROM } from "../../src/store/sql/term-stats.js";
import type { Store } from "../../src/store/store.js";
import { databaseUrlFor, onPostgres, withDatabase } from "../helpers/database.js";
import { newMemoryRow } from "../helpers/memory-rows.js";
import { tempDir } from "../helpers/server.js";

// PostgreSQL's keyword search looks for candidates in tiers: the entries holding every word, then
// those missing one, then those holding the rarest words (src/store/postgres/keyword-tiers.ts).
describe.runIf(onPostgres)("PostgreSQL keyword search over common words", () => {
  const dirs: string[] = [];
  const stores: Store[] = [];
  afterEach(async () => {
    for (const store of stores.splice(0)) await store.close();
    for (const dir of dirs.splice(0)) rmSync(dir, { recursive: true, force: true });
  });

  /** A store holding, in this order, each group: entries as written, or `count` notes naming `word` (written in one statement). */
  async function storeWith(groups: (string[] | { word: string; count: number })[]): Promise<{ store: Store; pkOf: (content: string) => number }> {
    const dir = tempDir();
    dirs.push(dir);
    const store = await openStore({ databaseUrl: databaseUrlFor(dir), file: join(dir, "cairn.db") });
    stores.push(store);
    const pks = new Map<string, number>();
    for (const group of groups) {
      if (Array.isArray(group)) {
        await store.transaction(async (tx) => {
          for (const content of group) pks.set(content, await store.memory.insert(tx, newMemoryRow(content), []));
        });
        continue;
      }
      const row = newMemoryRow("");
      await withDatabase(dir, (db) =>
        db.run(
          `INSERT INTO memory (id, type, agent_id, project, scope, content, content_key, confidence, parents, tags, created_at, updated_at, version)
           SELECT ? || '-' || n, 'memory', 'writer', NULL, 'project', ? || ' note ' || n || ' about the staging cluster', ? || '-' || n, 1, '[]', '[]', ?, ?, 1
             FROM generate_series(1, ?::int) AS n`,
          `${row.id}`, group.word, `${row.id}`, row.created_at, row.updated_at, group.count,
        ),
      );
    }
    return { store, pkOf: (content) => pks.get(content) as number };
  }

  const viewpoint = { agentId: "reader", allProjects: false };
  const search = (store: Store, words: string[], limit: number) => store.keywords.search(store.reader, viewpoint, new Date().toISOString(), words, {}, limit);

  it("ranks the entries holding every word first, then those missing only the rarest, when too few hold every word", async () => {
    const everyWord = ["rollback after the canary deploy failed", "the canary deploy needs a rollback plan"];
    const allButRarest = ["canary deploy to the eu cluster", "a canary deploy for the billing service", "canary deploy dashboards"];
    // So many hold "canary" and "deploy" that the rarest word alone bounds the candidates: those
    // holding only "canary deploy" would not be among them.
    const { store, pkOf } = await storeWith([
      { word: "canary", count: MAX_KEYWORD_CANDIDATES / 2 },
      everyWord,
      allButRarest,
      { word: "canary", count: MAX_KEYWORD_CANDIDATES / 2 },
      { word: "deploy", count: MAX_KEYWORD_CANDIDATES },
    ]);
    const found = await search(store, ["rollback", "canary", "deploy"], 5);
    expect(new Set(found.hits.slice(0, 2).map((hit) => hit.pk))).toEqual(new Set(everyWord.map(pkOf)));
    expect(new Set(found.hits.slice(2).map((hit) => hit.pk))).toEqual(new Set(allButRarest.map(pkOf)));
    const scores = found.hits.map((hit) => hit.score);
    expect(scores).toEqual([...scores].sort((a, b) => b - a));
  });

  it("finds the entries holding every word even when the newest entries holding the rarest one are others", async () => {
    const both = Array.from({ length: 6 }, (_, index) => `canary deploy ${index}`);
    const { store, pkOf } = await storeWith([both, { word: "canary", count: MAX_KEYWORD_CANDIDATES + 200 }, { word: "deploy", count: MAX_KEYWORD_CANDIDATES + 400 }]);
    const found = await search(store, ["canary", "deploy"], 5);
    expect(found.hits).toHaveLength(5);
    for (const hit of found.hits) expect(both.map(pkOf)).toContain(hit.pk);
    // The same entries score the same however wide the search: with a limit beyond the six, the
    // candidates are every entry holding the rarest word.
    const wide = await search(store, ["canary", "deploy"], 10);
    expect(wide.hits.slice(0, 5)).toEqual(found.hits);
    expect(wide.ceiling).toBe(found.ceiling);
  });

  it("takes a large index's common words' counts from PostgreSQL's statistics, rarer words' from the index", async () => {
    const lighthouses = TERM_STATS_CACHE_FROM / 4;
    const { store } = await storeWith([
      { word: "harbour", count: TERM_STATS_CACHE_FROM },
      { word: "lighthouse", count: lighthouses },
      ["a harbour with one lighthouse keeper"],
    ]);
    const analysed = TERM_STATS_CACHE_FROM + lighthouses + 1;
    await withDatabase(dirs.at(-1) as string, async (db) => {
      // This test's database: no autovacuum may take the statistics again before the search.
      await db.run("ALTER TABLE memory SET (autovacuum_enabled = false)");
      await db.run("ANALYZE memory");
      // After the statistics were taken (of every row: fewer than ANALYZE samples): an exact count
      // sees this, the statistics do not.
      await db.run("DELETE FROM memory WHERE content LIKE 'lighthouse note %' AND id LIKE '%0'");
    });
    const documents = analysed - lighthouses / 10;
    const { ceiling } = await search(store, ["lighthouse", "keeper"], 5);
    // "keeper" is on one entry, which no sample lists as common: counted.
    const sampled = Math.round(((lighthouses + 1) / analysed) * documents);
    expect(ceiling).toBeCloseTo(bm25Idf(documents, sampled) + bm25Idf(documents, 1), 6);
    expect(ceiling).not.toBeCloseTo(bm25Idf(documents, lighthouses + 1 - lighthouses / 10) + bm25Idf(documents, 1), 2);
  });

  it("scores BM25 from each query word's count of positions in an entry and the entry's whole length", async () => {
    const repeated = "deploy the canary, deploy it again, then deploy the rollback";
    const { store, pkOf } = await storeWith([[repeated, "a deploy once", "the staging cluster restarts nightly", "billing exports run at noon"]]);
    const found = await search(store, ["deploy", "rollback"], 5);
    const { lexemes, average } = await withDatabase(dirs.at(-1) as string, async (db) => ({
      lexemes: (await db.get<{ n: number }>("SELECT length(search) AS n FROM memory WHERE content = ?", repeated))?.n ?? 0,
      average: (await db.get<{ a: number }>("SELECT avg(length(search))::float8 AS a FROM memory"))?.a ?? 0,
    }));
    const part = (idf: number, tf: number): number => (idf * tf * (BM25_K1 + 1)) / (tf + BM25_K1 * (1 - BM25_B + (BM25_B * lexemes) / average));
    // "deploy" three times (three positions), "rollback" once; 4 entries, "deploy" on 2 of them.
    const expected = part(bm25Idf(4, 2), 3) + part(bm25Idf(4, 1), 1);
    expect(found.hits[0]?.pk).toBe(pkOf(repeated));
    expect(found.hits[0]?.score).toBeCloseTo(expected, 9);
    expect(found.hits).toHaveLength(2);
  });

  it("finds an entry by a word a search of a large index had found on no entry, once one holds it", async () => {
    const { store } = await storeWith([{ word: "harbour", count: TERM_STATS_CACHE_FROM }]);
    expect((await search(store, ["zeppelin"], 5)).hits).toEqual([]);
    const pk = await store.transaction((tx) => store.memory.insert(tx, newMemoryRow("a zeppelin over the harbour"), []));
    expect((await search(store, ["zeppelin"], 5)).hits.map((hit) => hit.pk)).toEqual([pk]);
  });
});
