import { rmSync } from "node:fs";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { BitMirror } from "../../src/store/sqlite/bit-mirror.js";
import { MirrorLists } from "../../src/store/sqlite/mirror-lists.js";
import type { SurveyFilter } from "../../src/store/sqlite/survey-table.js";
import { MirrorTable, signBits, type MirrorFilter, type MirrorRow, type Partitioning } from "../../src/store/sqlite/mirror-table.js";
import { SqliteStore } from "../../src/store/sqlite/store.js";
import { NO_EXPIRY } from "../../src/store/vectors.js";
import { newMemoryRow, vectorMeta } from "../helpers/memory-rows.js";
import { cosineDistance, randomUnitVector, seededUniform } from "../helpers/random-vectors.js";
import { tempDir } from "../helpers/server.js";

// The partition of the bit mirror's rows into lists (src/store/sqlite/mirror-lists.ts) and the
// coarse scans that read only the lists nearest to a query (mirror-table.ts): every row in the
// list of its nearest centroid through writes, moves and removals, also while a partition is
// filled; a coarse scan nearly as good as a full one on clustered vectors, and a full scan
// wherever the nearest lists cannot answer.
const DIMENSIONS = 128;
const PARTITIONING: Partitioning = { fromRows: 1000, minProbed: 4, listsPerProbed: 8 };
const EVERYONE: MirrorFilter = { column: "vis_key", keys: ["g"], nowMs: 0 };

/** Vectors around `clusters` centres, as texts on a few subjects embed. */
function clustered(seed: number, clusters = 40): () => Float32Array {
  const next = seededUniform(seed);
  const centres = Array.from({ length: clusters }, () => randomUnitVector(next, DIMENSIONS));
  let drawn = 0;
  return () => {
    const centre = centres[drawn++ % clusters] as Float32Array;
    const vector = centre.map((value) => value + next() * 0.12);
    const norm = Math.hypot(...vector);
    return vector.map((value) => value / norm);
  };
}

const rowOf = (pk: number, vector: Float32Array, visKey = "g"): MirrorRow => ({
  pk,
  bits: signBits(vector),
  embedding: vector,
  vis_key: visKey,
  owner_key: "",
  project_key: "",
  type: "memory",
  agent_id: "ada",
  confidence: 1,
  expires_ms: NO_EXPIRY,
});

/** A small perturbation of `vector`: a near duplicate of it. */
const nudged = (vector: Float32Array, next: () => number): Float32Array => vector.map((value) => value + next() * 0.004);

const nearestByCosine = (query: Float32Array, vectors: Map<number, Float32Array>, k: number): number[] =>
  [...vectors]
    .sort(([, a], [, b]) => cosineDistance(a, query) - cosineDistance(b, query))
    .slice(0, k)
    .map(([pk]) => pk);

const keepGoing = (): Promise<boolean> => Promise.resolve(true);

describe("the lists of a partition", () => {
  it("hold every row once, in the list of its nearest centroid, with its bits and columns, through assignments, removals and moves", () => {
    const next = seededUniform(3);
    const centroids = Array.from({ length: 12 }, () => signBits(randomUnitVector(next, DIMENSIONS)));
    // Trained at no rows: every list starts with the least room, so many move as they fill.
    const lists = new MirrorLists(DIMENSIONS, centroids, 0);
    const held = new Map<number, { bits: Uint8Array; key: number }>();
    const assign = (slot: number): void => {
      const row = { bits: signBits(randomUnitVector(next, DIMENSIONS)), key: Math.floor((next() + 0.5) * 3) };
      lists.assign(slot, row.bits, { visKey: row.key, ownerKey: 0, projectKey: 0, type: 0, agent: 0, confidence: 1, expiresMs: Infinity });
      held.set(slot, row);
    };
    for (let slot = 0; slot < 400; slot++) assign(slot);
    for (let step = 0; step < 600; step++) {
      const slot = Math.floor((next() + 0.5) * 400);
      const roll = next();
      if (roll < -0.2 && held.has(slot)) {
        lists.remove(slot);
        held.delete(slot);
      } else if (roll < 0.2 && held.has(slot) && !held.has(slot + 1000)) {
        // As the table moves its last row into a removed one's slot.
        lists.move(slot, slot + 1000);
        held.set(slot + 1000, held.get(slot) as { bits: Uint8Array; key: number });
        held.delete(slot);
      } else assign(slot);
    }
    const keys = (...allowed: number[]): SurveyFilter => ({ keyColumn: "visKey", allowedKeys: Uint8Array.from([0, 1, 2], (key) => (allowed.includes(key) ? 1 : 0)), nowMs: 0, projectKey: -1, agent: -1, allowedTypes: null, confidenceMin: -Infinity });
    const everyList = (bits: Uint8Array, filter: SurveyFilter, size: number): number[] => [...lists.nearest(bits, lists.size, filter, size)].sort((a, b) => a - b);
    const slotsWith = (...allowed: number[]): number[] => [...held].filter(([, row]) => allowed.includes(row.key)).map(([slot]) => slot).sort((a, b) => a - b);
    const zeros = new Uint8Array(DIMENSIONS / 8);
    expect(everyList(zeros, keys(0, 1, 2), 10_000)).toEqual(slotsWith(0, 1, 2));
    expect(everyList(zeros, keys(1), 10_000)).toEqual(slotsWith(1));
    for (const [slot, row] of held) {
      expect(lists.listAt(slot)).toBe(lists.nearestList(row.bits));
      // Its own bits, at distance 0, are its row's in the copy.
      expect(everyList(row.bits, keys(0, 1, 2), 1)).toEqual([slot]);
    }
    for (let slot = 0; slot < 400; slot++) if (!held.has(slot)) expect(lists.listAt(slot)).toBe(-1);
  });
});

describe("coarse scans of the bit mirror", () => {
  async function partitioned(rows: number, seed = 11): Promise<{ table: MirrorTable; vectors: Map<number, Float32Array>; next: () => number }> {
    const draw = clustered(seed);
    const table = new MirrorTable(DIMENSIONS, undefined, PARTITIONING);
    const vectors = new Map<number, Float32Array>();
    for (let pk = 1; pk <= rows; pk++) {
      const vector = draw();
      vectors.set(pk, vector);
      table.upsert(rowOf(pk, vector));
    }
    expect(table.partitionDue).toBe(true);
    expect(await table.partition(keepGoing)).toBe(true);
    expect(table.partitionDue).toBe(false);
    return { table, vectors, next: seededUniform(seed + 1) };
  }

  it("reads every row until the rows are partitioned, and the nearest lists after", async () => {
    const draw = clustered(5);
    const table = new MirrorTable(DIMENSIONS, undefined, PARTITIONING);
    const vectors = new Map<number, Float32Array>();
    for (let pk = 1; pk <= 999; pk++) {
      vectors.set(pk, draw());
      table.upsert(rowOf(pk, vectors.get(pk) as Float32Array));
    }
    // Below `fromRows`: no partition is due, and a coarse scan is a full one.
    expect(table.partitionDue).toBe(false);
    expect(table.listCount).toBe(0);
    const query = draw();
    expect(table.nearest(query, 8, { ...EVERYONE, coarse: true }).sort()).toEqual(table.nearest(query, 8, EVERYONE).sort());
    vectors.set(1000, draw());
    table.upsert(rowOf(1000, vectors.get(1000) as Float32Array));
    expect(table.partitionDue).toBe(true);
    expect(await table.partition(keepGoing)).toBe(true);
    // About the square root of the rows.
    expect(table.listCount).toBe(32);
  });

  it("finds each near duplicate, and nearly the nearest rows a full scan finds", async () => {
    const { table, vectors, next } = await partitioned(4000);
    const recalled = { coarse: 0, full: 0 };
    let asked = 0;
    for (let round = 0; round < 30; round++) {
      const pk = 1 + Math.floor((next() + 0.5) * 4000);
      const query = nudged(vectors.get(pk) as Float32Array, next);
      const exact = new Set(nearestByCosine(query, vectors, 8));
      const top = (found: number[]): number[] => nearestByCosine(query, new Map(found.map((at) => [at, vectors.get(at) as Float32Array])), 8);
      const coarse = table.nearest(query, 16, { ...EVERYONE, coarse: true });
      expect(coarse).toContain(pk);
      recalled.coarse += top(coarse).filter((found) => exact.has(found)).length;
      recalled.full += top(table.nearest(query, 16, EVERYONE)).filter((found) => exact.has(found)).length;
      asked += 8;
    }
    expect(recalled.coarse / asked).toBeGreaterThan(recalled.full / asked - 0.05);
  });

  it("scans every row when too few pass the filter in the nearest lists", async () => {
    const { table, vectors, next } = await partitioned(3000);
    // Three private rows, far apart: the lists nearest to a query hold at most one of them.
    const draw = clustered(99, 3);
    for (const pk of [90_001, 90_002, 90_003]) {
      vectors.set(pk, draw());
      table.upsert(rowOf(pk, vectors.get(pk) as Float32Array, "a:ada"));
    }
    const mine: MirrorFilter = { column: "vis_key", keys: ["a:ada"], nowMs: 0, coarse: true };
    for (let round = 0; round < 5; round++) {
      const query = randomUnitVector(next, DIMENSIONS);
      expect(table.nearest(query, 3, mine).sort()).toEqual([90_001, 90_002, 90_003]);
    }
  });

  it("keeps every row in its list through writes and removals made while a partition is filled", async () => {
    const draw = clustered(21);
    const table = new MirrorTable(DIMENSIONS, undefined, PARTITIONING);
    const vectors = new Map<number, Float32Array>();
    let nextPk = 1;
    const write = (): void => {
      const pk = nextPk++;
      vectors.set(pk, draw());
      table.upsert(rowOf(pk, vectors.get(pk) as Float32Array));
    };
    for (let count = 0; count < 7000; count++) write();
    const next = seededUniform(8);
    const pickPk = (): number => [...vectors.keys()][Math.floor((next() + 0.5) * vectors.size)] as number;
    let pauses = 0;
    // At every pause of the training and the filling: new rows, rows written again elsewhere, rows removed.
    const busy = (): Promise<boolean> => {
      pauses++;
      for (let change = 0; change < 40; change++) {
        const roll = next();
        if (roll < -0.2) write();
        else if (roll < 0.2) {
          const pk = pickPk();
          vectors.set(pk, draw());
          table.upsert(rowOf(pk, vectors.get(pk) as Float32Array));
        } else {
          const pk = pickPk();
          vectors.delete(pk);
          table.remove(pk);
        }
      }
      return Promise.resolve(true);
    };
    expect(await table.partition(busy)).toBe(true);
    expect(pauses).toBeGreaterThan(3);
    expect(table.count).toBe(vectors.size);
    // Each row is in the list of its nearest centroid, which every coarse scan reads: a row's own
    // vector finds it.
    for (const [pk, vector] of vectors) expect(table.nearest(vector, 1, { ...EVERYONE, coarse: true })).toEqual([pk]);
  });

  it("is partitioned again once the rows have doubled, and a stopped partition leaves none", async () => {
    const { table, vectors } = await partitioned(1000, 31);
    const lists = table.listCount;
    const draw = clustered(32);
    for (let pk = 1001; pk < 2000; pk++) table.upsert(rowOf(pk, draw()));
    expect(table.partitionDue).toBe(false);
    table.upsert(rowOf(2000, draw()));
    expect(table.partitionDue).toBe(true);
    expect(await table.partition(() => Promise.resolve(false))).toBe(false);
    // The lists trained before still answer, and still hold every row.
    expect(table.listCount).toBe(lists);
    for (const [pk, vector] of vectors) expect(table.nearest(vector, 1, { ...EVERYONE, coarse: true })).toEqual([pk]);
    expect(await table.partition(keepGoing)).toBe(true);
    expect(table.listCount).toBe(Math.round(Math.sqrt(2000)));
  });
});

describe("the bit mirror's partition", () => {
  const dirs: string[] = [];
  const stores: SqliteStore[] = [];
  afterEach(async () => {
    for (const store of stores.splice(0)) await store.close();
    for (const dir of dirs.splice(0)) rmSync(dir, { recursive: true, force: true });
  });

  it("is made in the background once the store is past its size, and follows the store's writes", async () => {
    const dir = tempDir();
    dirs.push(dir);
    const store = SqliteStore.open(join(dir, "cairn.db"));
    stores.push(store);
    await store.vectors.ensure("test-model", DIMENSIONS);
    const draw = clustered(41);
    const put = (vector: Float32Array): Promise<number> =>
      store.transaction(async (tx) => {
        const pk = await store.memory.insert(tx, newMemoryRow("a note", "ada"), []);
        await store.vectors.put(tx, pk, vector, vectorMeta({ agentId: "ada" }));
        return pk;
      });
    for (let row = 0; row < 1200; row++) await put(draw());
    const mirror = new BitMirror(store.reader, (error) => {
      throw error;
    }, { partitioning: PARTITIONING });
    expect(await mirror.settled()).toBe(true);
    expect(mirror.lists).toBe(Math.round(Math.sqrt(1200)));
    expect(mirror.status).toBe("ready");
    // A row written after the partition is found by a coarse scan of its own vector.
    const vector = draw();
    const pk = await put(vector);
    expect(mirror.candidates(vector, 1, { column: "vis_key", keys: ["g"], nowMs: Date.now(), coarse: true })).toEqual([pk]);
    mirror.close();
  });
});
