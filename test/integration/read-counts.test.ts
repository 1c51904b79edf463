import { rmSync } from "node:fs";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { openStore } from "../../src/store/open.js";
import type { ReadRecord } from "../../src/store/memory.js";
import type { Store } from "../../src/store/store.js";
import { databaseUrlFor, onPostgres, withDatabase } from "../helpers/database.js";
import { newMemoryRow } from "../helpers/memory-rows.js";
import { tempDir } from "../helpers/server.js";

// A flush of buffered reads is written as a batch: one row per entry and reader in
// memory_readers, and each entry's read_count and distinct_readers moved by the batch's reads.
describe(`read counts written as a batch (${onPostgres ? "PostgreSQL" : "SQLite"})`, () => {
  const dirs: string[] = [];
  const stores: Store[] = [];
  afterEach(async () => {
    for (const store of stores.splice(0)) await store.close();
    for (const dir of dirs.splice(0)) rmSync(dir, { recursive: true, force: true });
  });

  const dirOf = new Map<Store, string>();

  async function open(): Promise<Store> {
    const dir = tempDir();
    dirs.push(dir);
    const store = await openStore({ databaseUrl: databaseUrlFor(dir), file: join(dir, "cairn.db") });
    stores.push(store);
    dirOf.set(store, dir);
    return store;
  }

  const read = (pk: number, agentId: string, second: number, context: string | null = null): ReadRecord => ({
    pk,
    agentId,
    at: `2026-12-04T10:00:${String(second).padStart(2, "0")}.000Z`,
    context,
  });

  async function readers(store: Store, pk: number): Promise<{ agent_id: string; reads: number; first_read_at: string; last_read_at: string; last_context: string | null }[]> {
    const rows = await withDatabase(dirOf.get(store) as string, (db) =>
      db.all<{ agent_id: string; reads: number | string; first_read_at: string; last_read_at: string; last_context: string | null }>(
        "SELECT agent_id, reads, first_read_at, last_read_at, last_context FROM memory_readers WHERE memory_pk = ? ORDER BY agent_id",
        pk,
      ),
    );
    return rows.map((row) => ({ ...row, reads: Number(row.reads) }));
  }

  it("counts repeated reads of one reader once as a reader, and every read", async () => {
    const store = await open();
    const [a, b] = await store.transaction(async (tx) => [await store.memory.insert(tx, newMemoryRow("first"), []), await store.memory.insert(tx, newMemoryRow("second"), [])]);
    await store.transaction((tx) =>
      store.memory.recordReads(tx, [read(b, "zoe", 5, "search: deploy"), read(a, "ann", 1), read(a, "ann", 3, "search: x"), read(a, "bob", 2), read(a, "ann", 2)]),
    );
    const rows = await store.memory.byPks(store.reader, [a, b]);
    expect(rows.get(a)).toMatchObject({ read_count: 4, distinct_readers: 2 });
    expect(rows.get(b)).toMatchObject({ read_count: 1, distinct_readers: 1 });
    expect(await readers(store, a)).toEqual([
      { agent_id: "ann", reads: 3, first_read_at: read(a, "", 1).at, last_read_at: read(a, "", 3).at, last_context: "search: x" },
      { agent_id: "bob", reads: 1, first_read_at: read(a, "", 2).at, last_read_at: read(a, "", 2).at, last_context: null },
    ]);

    // A later batch: ann is no new reader, cid is; ann's context stays when the read gives none.
    await store.transaction((tx) => store.memory.recordReads(tx, [read(a, "ann", 9), read(a, "cid", 8), read(a, "cid", 9, "handoff")]));
    expect((await store.memory.byPks(store.reader, [a])).get(a)).toMatchObject({ read_count: 7, distinct_readers: 3 });
    expect(await readers(store, a)).toEqual([
      { agent_id: "ann", reads: 4, first_read_at: read(a, "", 1).at, last_read_at: read(a, "", 9).at, last_context: "search: x" },
      { agent_id: "bob", reads: 1, first_read_at: read(a, "", 2).at, last_read_at: read(a, "", 2).at, last_context: null },
      { agent_id: "cid", reads: 2, first_read_at: read(a, "", 8).at, last_read_at: read(a, "", 9).at, last_context: "handoff" },
    ]);
  });

  it("passes over reads of an entry that is gone", async () => {
    const store = await open();
    const kept = await store.transaction((tx) => store.memory.insert(tx, newMemoryRow("kept"), []));
    await store.transaction((tx) => store.memory.recordReads(tx, [read(kept + 1000, "ann", 1), read(kept, "ann", 2)]));
    expect((await store.memory.byPks(store.reader, [kept])).get(kept)).toMatchObject({ read_count: 1, distinct_readers: 1 });
    expect(await readers(store, kept + 1000)).toEqual([]);
  });
});
