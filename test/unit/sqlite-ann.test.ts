import { existsSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { newId } from "../../src/core/ids.js";
import type { NewMemoryRow } from "../../src/store/memory.js";
import { SqliteStore } from "../../src/store/sqlite/store.js";
import type { VectorFilter, VectorMeta } from "../../src/store/vectors.js";
import { newMemoryRow, vectorMeta } from "../helpers/memory-rows.js";
import { tempDir } from "../helpers/server.js";
import { cosineDistance, randomUnitVector, seededUniform } from "../helpers/random-vectors.js";

// The HNSW index beside a SQLite store (src/store/sqlite/ann.ts), with its threshold lowered so a
// small store uses it. Vectors are seeded random unit vectors; "exact" is a brute-force cosine
// over every vector the filter lets through.
const DIMENSIONS = 16;
const ENTRIES = 400;
const THRESHOLD = 50;

const random = seededUniform;
const unitVector = (next: () => number): Float32Array => randomUnitVector(next, DIMENSIONS);

const row = (agent: string): NewMemoryRow => newMemoryRow(`entry ${newId()}`, agent);

const meta = vectorMeta;

interface Fixture {
  file: string;
  /** Each entry's vector and metadata, as the test last wrote them. */
  entries: Map<number, { vector: Float32Array; meta: VectorMeta }>;
  next: () => number;
}

const open = (file: string, ann: { threshold: number; saveEvery?: number } | false = { threshold: THRESHOLD }): SqliteStore => SqliteStore.open(file, { ann });

async function put(store: SqliteStore, fixture: Fixture, vector: Float32Array, vectorMeta = meta()): Promise<number> {
  return store.transaction(async (tx) => {
    const pk = await store.memory.insert(tx, row(vectorMeta.agentId), []);
    await store.vectors.put(tx, pk, vector, vectorMeta);
    fixture.entries.set(pk, { vector, meta: vectorMeta });
    return pk;
  });
}

async function seeded(dir: string): Promise<{ store: SqliteStore; fixture: Fixture }> {
  const file = join(dir, "cairn.db");
  const store = open(file);
  await store.vectors.ensure("test-model", DIMENSIONS);
  const fixture: Fixture = { file, entries: new Map(), next: random(7) };
  await store.transaction(async (tx) => {
    for (let i = 0; i < ENTRIES; i++) {
      const pk = await store.memory.insert(tx, row("writer"), []);
      const vector = unitVector(fixture.next);
      await store.vectors.put(tx, pk, vector, meta());
      fixture.entries.set(pk, { vector, meta: meta() });
    }
  });
  return { store, fixture };
}

const everyone = (agentId = "reader"): VectorFilter => ({ within: { viewpoint: { agentId, allProjects: false } }, nowMs: Date.now() });

/** The exact top k among shared entries (global, unexpired) by brute force. */
function exact(fixture: Fixture, query: Float32Array, k: number, passes = (entry: VectorMeta) => entry.visKey === "g" && entry.expiresMs > Date.now()): number[] {
  return [...fixture.entries]
    .filter(([, entry]) => passes(entry.meta))
    .map(([pk, entry]) => ({ pk, distance: cosineDistance(query, entry.vector) }))
    .sort((a, b) => a.distance - b.distance || a.pk - b.pk)
    .slice(0, k)
    .map((hit) => hit.pk);
}

const header = (file: string): { file: string; identity: string; seq: number } =>
  JSON.parse(readFileSync(`${file}.hnsw.json`, "utf8")) as { file: string; identity: string; seq: number };

describe("the HNSW index beside a SQLite store", () => {
  const dirs: string[] = [];
  const stores: SqliteStore[] = [];
  afterEach(async () => {
    for (const store of stores.splice(0)) await store.close();
    for (const dir of dirs.splice(0)) rmSync(dir, { recursive: true, force: true });
  });

  async function ready(): Promise<{ store: SqliteStore; fixture: Fixture }> {
    const dir = tempDir();
    dirs.push(dir);
    const made = await seeded(dir);
    stores.push(made.store);
    expect(await made.store.vectors.annReady()).toBe(true);
    expect(made.store.vectors.annStatus).toBe("ready");
    return made;
  }

  /** A ready store, and a second process's store on its file that saves (and prunes the log) every 100 changes; `before` is the header as it was. */
  async function withSaver(): Promise<{ store: SqliteStore; fixture: Fixture; other: SqliteStore; before: ReturnType<typeof header> }> {
    const { store, fixture } = await ready();
    const other = open(fixture.file, { threshold: THRESHOLD, saveEvery: 100 });
    stores.push(other);
    expect(await other.vectors.annReady()).toBe(true);
    return { store, fixture, other, before: header(fixture.file) };
  }

  it("finds the exact top k of a store it indexes", async () => {
    const { store, fixture } = await ready();
    const next = random(99);
    for (let i = 0; i < 20; i++) {
      const query = unitVector(next);
      const found = await store.vectors.nearest(store.reader, query, 10, everyone());
      expect(found.map((hit) => hit.pk)).toEqual(exact(fixture, query, 10));
    }
  });

  it("never returns what the filters exclude: another agent's private entry, an expired one, another project", async () => {
    const { store, fixture } = await ready();
    const query = unitVector(random(5));
    const secret = await put(store, fixture, query, meta({ visKey: "a:other", ownerKey: "other", agentId: "other" }));
    const expired = await put(store, fixture, query, meta({ expiresMs: Date.now() - 1_000 }));
    const elsewhere = await put(store, fixture, query, meta({ visKey: "p:elsewhere", projectKey: "elsewhere" }));
    const found = (await store.vectors.nearest(store.reader, query, 10, everyone())).map((hit) => hit.pk);
    expect(found).not.toContain(secret);
    expect(found).not.toContain(expired);
    expect(found).not.toContain(elsewhere);
    expect(found).toEqual(exact(fixture, query, 10));
    // The owner sees their private entry first; a project filter passing few rows is answered exactly.
    expect((await store.vectors.nearest(store.reader, query, 1, everyone("other")))[0]?.pk).toBe(secret);
    const inProject = await store.vectors.nearest(store.reader, query, 10, { ...everyone("reader"), projectKey: "" });
    expect(inProject.map((hit) => hit.pk)).toEqual(exact(fixture, query, 10));
  });

  it("sees deletes and updates at the next query, and never a rolled-back put", async () => {
    const { store, fixture } = await ready();
    const query = unitVector(random(11));
    const [first] = exact(fixture, query, 1);
    await store.transaction((tx) => store.vectors.delete(tx, first as number));
    fixture.entries.delete(first as number);
    expect((await store.vectors.nearest(store.reader, query, 10, everyone())).map((hit) => hit.pk)).toEqual(exact(fixture, query, 10));

    const moved = exact(fixture, query, 50).at(-1) as number;
    await store.transaction((tx) => store.vectors.put(tx, moved, query, meta()));
    fixture.entries.set(moved, { vector: query, meta: meta() });
    expect((await store.vectors.nearest(store.reader, query, 1, everyone()))[0]?.pk).toBe(moved);

    const failed = new Error("rolled back");
    await expect(
      store.transaction(async (tx) => {
        const pk = await store.memory.insert(tx, row("writer"), []);
        await store.vectors.put(tx, pk, query.map((value, index) => (index === 0 ? value + 0.001 : value)), meta());
        throw failed;
      }),
    ).rejects.toBe(failed);
    expect((await store.vectors.nearest(store.reader, query, 10, everyone())).map((hit) => hit.pk)).toEqual(exact(fixture, query, 10));
  });

  // Between transactions the index reads the log through the writer; while one is open, through
  // the reader. A put caught up from an open transaction that then rolls back would stay in the
  // index, and the next put, given the same seq in the log, would never reach it.
  it("never takes in a put of a transaction still open, even one a query runs beside", async () => {
    const { store, fixture } = await ready();
    const query = unitVector(random(13));
    let seenDuring: number[] = [];
    await expect(
      store.transaction(async (tx) => {
        const pk = await store.memory.insert(tx, row("writer"), []);
        await store.vectors.put(tx, pk, query, meta());
        await new Promise((resolve) => setTimeout(resolve, 20));
        seenDuring = (await store.vectors.nearest(store.reader, query, 10, everyone())).map((hit) => hit.pk);
        throw new Error("roll back");
      }),
    ).rejects.toThrow("roll back");
    expect(seenDuring).toEqual(exact(fixture, query, 10));
    const other = unitVector(fixture.next);
    const committed = await put(store, fixture, other);
    expect((await store.vectors.nearest(store.reader, other, 10, everyone())).map((hit) => hit.pk)).toEqual(exact(fixture, other, 10));
    expect(exact(fixture, other, 1)).toEqual([committed]);
  });

  it("sees a write another store object made on the same file", async () => {
    const { store, fixture } = await ready();
    const other = open(fixture.file, false);
    stores.push(other);
    const query = unitVector(random(21));
    const written = await put(other, fixture, query);
    expect((await store.vectors.nearest(store.reader, query, 10, everyone())).map((hit) => hit.pk)).toEqual(exact(fixture, query, 10));
    expect((await store.vectors.nearest(store.reader, query, 1, everyone()))[0]?.pk).toBe(written);
  });

  it("catches up with many writes of another process, and reloads the saved file once that process pruned the log past it", async () => {
    const { store, fixture, other, before } = await withSaver();
    // More than a query applies itself: the first queries scan while the rest is applied in the background.
    await other.transaction(async (tx) => {
      for (let i = 0; i < 300; i++) {
        const pk = await other.memory.insert(tx, row("writer"), []);
        const vector = unitVector(fixture.next);
        await other.vectors.put(tx, pk, vector, meta());
        fixture.entries.set(pk, { vector, meta: meta() });
      }
    });
    // Answered meanwhile (by the bit scan, approximate on 16 dimensions): the last write is its own nearest.
    const [lastPk, last] = [...fixture.entries].at(-1) as [number, { vector: Float32Array }];
    expect((await store.vectors.nearest(store.reader, last.vector, 10, everyone()))[0]?.pk).toBe(lastPk);
    const query = unitVector(random(61));
    // The other store applies them, saves its index past 100 changes and prunes the log.
    expect(await other.vectors.annReady()).toBe(true);
    // Saving writes the file and hashes it in the worker: waited for, however long a loaded machine takes.
    await expect.poll(() => header(fixture.file).file, { timeout: 60_000 }).not.toBe(before.file);
    expect(await store.vectors.annReady()).toBe(true);
    expect((await store.vectors.nearest(store.reader, query, 10, everyone())).map((hit) => hit.pk)).toEqual(exact(fixture, query, 10));
    expect((await other.vectors.nearest(other.reader, query, 10, everyone())).map((hit) => hit.pk)).toEqual(exact(fixture, query, 10));
  });

  it("loads another process's newer file at once when that process pruned the log past its index", async () => {
    const { store, fixture, other, before } = await withSaver();
    for (let i = 0; i < 150; i++) await put(other, fixture, unitVector(fixture.next));
    // No query of `store` meanwhile: the first look it takes finds the log pruned past its index.
    await expect.poll(() => header(fixture.file).file, { timeout: 60_000 }).not.toBe(before.file);
    expect(header(fixture.file).seq).toBeGreaterThan(before.seq);
    expect(await store.vectors.annReady()).toBe(true);
    const query = unitVector(random(67));
    expect((await store.vectors.nearest(store.reader, query, 10, everyone())).map((hit) => hit.pk)).toEqual(exact(fixture, query, 10));
  });

  it("loads its saved file at the next start and catches up with writes made after it was saved", async () => {
    const { store, fixture } = await ready();
    await store.close();
    const saved = header(fixture.file);

    const writer = open(fixture.file, false);
    const query = unitVector(random(31));
    const written = await put(writer, fixture, query);
    await writer.close();

    const reopened = open(fixture.file);
    stores.push(reopened);
    expect(await reopened.vectors.annReady()).toBe(true);
    const found = await reopened.vectors.nearest(reopened.reader, query, 10, everyone());
    expect(found[0]?.pk).toBe(written);
    expect(found.map((hit) => hit.pk)).toEqual(exact(fixture, query, 10));
    // Loaded, not rebuilt: the header still names the file the first store saved.
    expect(header(fixture.file).file).toBe(saved.file);
  });

  it("rebuilds rather than trusts a damaged index file or one of another database", async () => {
    const { store, fixture } = await ready();
    await store.close();
    const saved = header(fixture.file);
    const indexFile = join(fixture.file, "..", saved.file);
    const bytes = readFileSync(indexFile);
    bytes.fill(0xff, 0, 64);
    writeFileSync(indexFile, bytes);

    const damaged = open(fixture.file);
    expect(await damaged.vectors.annReady()).toBe(true);
    const query = unitVector(random(41));
    expect((await damaged.vectors.nearest(damaged.reader, query, 10, everyone())).map((hit) => hit.pk)).toEqual(exact(fixture, query, 10));
    const rebuilt = header(fixture.file);
    expect(rebuilt.file).not.toBe(saved.file);
    await damaged.close();

    writeFileSync(`${fixture.file}.hnsw.json`, JSON.stringify({ ...header(fixture.file), identity: `other-model|${DIMENSIONS}|bits-v1|` }));
    const foreign = open(fixture.file);
    stores.push(foreign);
    expect(await foreign.vectors.annReady()).toBe(true);
    expect((await foreign.vectors.nearest(foreign.reader, query, 10, everyone())).map((hit) => hit.pk)).toEqual(exact(fixture, query, 10));
    expect(header(fixture.file).file).not.toBe(rebuilt.file);
  });

  it("abandons a build under way when the store closes, rather than waiting for it", async () => {
    const dir = tempDir();
    dirs.push(dir);
    const file = join(dir, "cairn.db");
    const store = open(file, { threshold: THRESHOLD });
    await store.vectors.ensure("test-model", DIMENSIONS);
    const next = random(13);
    // Enough points that the build is still running when the store closes.
    await store.transaction(async (tx) => {
      for (let i = 0; i < 20_000; i++) {
        const pk = await store.memory.insert(tx, row("writer"), []);
        await store.vectors.put(tx, pk, unitVector(next), meta());
      }
    });
    const ready = store.vectors.annReady();
    expect(store.vectors.annStatus).toBe("building");
    await store.close();
    expect(await ready).toBe(false);
    expect(store.vectors.annStatus).toBe("off");
    expect(existsSync(`${file}.hnsw.json`)).toBe(false);
  });

  it("builds no index below its threshold", async () => {
    const dir = tempDir();
    dirs.push(dir);
    const file = join(dir, "cairn.db");
    const store = open(file, { threshold: ENTRIES + 1 });
    stores.push(store);
    await store.vectors.ensure("test-model", DIMENSIONS);
    const fixture: Fixture = { file, entries: new Map(), next: random(3) };
    for (let i = 0; i < 20; i++) await put(store, fixture, unitVector(fixture.next));
    expect(await store.vectors.annReady()).toBe(false);
    expect(store.vectors.annStatus).toBe("off");
    const query = unitVector(random(51));
    expect((await store.vectors.nearest(store.reader, query, 5, everyone())).map((hit) => hit.pk)).toEqual(exact(fixture, query, 5));
  });
});
