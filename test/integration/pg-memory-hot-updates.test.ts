import { rmSync } from "node:fs";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { openStore } from "../../src/store/open.js";
import type { Store } from "../../src/store/store.js";
import { databaseUrlFor, onPostgres, withDatabase } from "../helpers/database.js";
import { newMemoryRow } from "../helpers/memory-rows.js";
import { tempDir } from "../helpers/server.js";

// Counting a read changes no indexed column of memory: PostgreSQL can keep the row's new version on
// its page (a HOT update, no index touched) only when the page has room for it (migration 025).
describe.runIf(onPostgres)("PostgreSQL memory pages keep room for a read's count", () => {
  const dirs: string[] = [];
  const stores: Store[] = [];
  afterEach(async () => {
    for (const store of stores.splice(0)) await store.close();
    for (const dir of dirs.splice(0)) rmSync(dir, { recursive: true, force: true });
  });

  it("records reads of an entry on every page without moving any of them off its page", async () => {
    const dir = tempDir();
    dirs.push(dir);
    const store = await openStore({ databaseUrl: databaseUrlFor(dir), file: join(dir, "cairn.db") });
    stores.push(store);
    // Rows of one size: on a page filled to the brim, the leftover space is smaller than a row.
    const content = "the staging cluster restarts nightly after the billing export ".repeat(10);
    await store.transaction(async (tx) => {
      for (let index = 0; index < 120; index += 1) await store.memory.insert(tx, newMemoryRow(content), []);
    });
    const blocks = () =>
      withDatabase(dir, (db) => db.all<{ pk: number; block: number }>("SELECT pk, (ctid::text::point)[0]::int AS block FROM memory ORDER BY pk"));
    const before = await blocks();
    const firstOnEachPage = new Map<number, number>();
    for (const row of before) if (!firstOnEachPage.has(row.block)) firstOnEachPage.set(row.block, Number(row.pk));
    expect(firstOnEachPage.size).toBeGreaterThan(5);
    const at = new Date().toISOString();
    await store.transaction((tx) => store.memory.recordReads(tx, [...firstOnEachPage.values()].map((pk) => ({ pk, agentId: "reader", at, context: null }))));
    const after = new Map((await blocks()).map((row) => [Number(row.pk), row.block]));
    for (const [block, pk] of firstOnEachPage) expect(after.get(pk), `entry ${pk}`).toBe(block);
    const counted = await withDatabase(dir, (db) => db.all<{ read_count: number }>("SELECT read_count FROM memory WHERE read_count > 0"));
    expect(counted).toHaveLength(firstOnEachPage.size);
  });
});
