import { rmSync } from "node:fs";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { newId } from "../../src/core/ids.js";
import { BitMirror, MIRROR_MAX_ROWS, mirrorMaxRows } from "../../src/store/sqlite/bit-mirror.js";
import type { Db } from "../../src/store/sqlite/connection.js";
import { int8Of, type Shortlist } from "../../src/store/sqlite/mirror-table.js";
import { SqliteStore } from "../../src/store/sqlite/store.js";
import { connectionOf } from "../../src/store/sqlite/transactions.js";
import { NO_EXPIRY, type VectorFilter, type VectorMeta } from "../../src/store/vectors.js";
import { newMemoryRow, vectorMeta } from "../helpers/memory-rows.js";
import { cosineDistance, randomUnitVector, seededUniform } from "../helpers/random-vectors.js";
import { tempDir } from "../helpers/server.js";

// The bit mirror (src/store/sqlite/bit-mirror.ts): a server's store scans the quantized vectors in
// its own memory instead of in vec0. Its answers are compared with those of a second store opened
// on the same file without it, which scans vec0: the same rows under every filter, after every
// kind of change. Vectors are seeded, so every run compares the same queries.
const DIMENSIONS = 96;
const ENTRIES = 500;

const meta = vectorMeta;

/** A spread of metadata: shared, project, private and expired entries of several types, authors and confidences. */
function variedMeta(index: number): VectorMeta {
  const agentId = ["ada", "bo", "cy"][index % 3] as string;
  const project = index % 4 === 0 ? "apollo" : index % 4 === 1 ? "zeus" : "";
  const isPrivate = index % 7 === 0;
  return meta({
    visKey: isPrivate ? `a:${agentId}` : project ? `p:${project}` : "g",
    ownerKey: isPrivate ? agentId : "",
    projectKey: project,
    type: ["memory", "doc", "skill"][index % 3 === 0 ? 0 : index % 5 === 0 ? 1 : 2] as string,
    agentId,
    confidence: (index % 10) / 10,
    expiresMs: index % 11 === 0 ? Date.now() - 60_000 : index % 13 === 0 ? Date.now() + 3_600_000 : NO_EXPIRY,
  });
}

const within = (agentId: string, allProjects = false): VectorFilter["within"] => ({ viewpoint: { agentId, allProjects } });

/** The filters compared: each viewpoint kind and each filter column. */
const filters = (): VectorFilter[] => {
  const nowMs = Date.now();
  return [
    { within: within("ada"), nowMs },
    { within: within("bo", true), nowMs },
    { within: within("owner", true), nowMs },
    { within: { visKey: "p:apollo" }, nowMs },
    { within: within("cy"), nowMs, projectKey: "" },
    { within: within("ada", true), nowMs, types: ["doc", "skill"] },
    { within: within("ada", true), nowMs, agentId: "bo" },
    { within: within("ada", true), nowMs, confidenceMin: 0.5 },
    { within: within("ada", true), nowMs, projectKey: "nowhere" },
  ];
};

describe("the bit mirror of a SQLite store's vectors", () => {
  const dirs: string[] = [];
  const stores: SqliteStore[] = [];
  afterEach(async () => {
    for (const store of stores.splice(0)) await store.close();
    for (const dir of dirs.splice(0)) rmSync(dir, { recursive: true, force: true });
  });

  /** A mirrored store (its HNSW threshold out of reach) and a plain one on the same file. */
  async function pair(): Promise<{ mirrored: SqliteStore; plain: SqliteStore; next: () => number }> {
    const dir = tempDir();
    dirs.push(dir);
    const file = join(dir, "cairn.db");
    const mirrored = SqliteStore.open(file, { ann: { threshold: 1_000_000_000 } });
    stores.push(mirrored);
    await mirrored.vectors.ensure("test-model", DIMENSIONS);
    const next = seededUniform(17);
    await mirrored.transaction(async (tx) => {
      const at = new Date().toISOString();
      await mirrored.projects.insert(tx, { id: "apollo", name: "apollo", description: "", owner: "ada", created_at: at });
      await mirrored.projects.addMember(tx, "apollo", "ada", at);
      for (let index = 0; index < ENTRIES; index++) {
        const vectorMeta = variedMeta(index);
        const pk = await mirrored.memory.insert(tx, newMemoryRow(`entry ${newId()}`, vectorMeta.agentId), []);
        await mirrored.vectors.put(tx, pk, randomUnitVector(next, DIMENSIONS), vectorMeta);
      }
    });
    const plain = SqliteStore.open(file);
    stores.push(plain);
    expect(await mirrored.vectors.mirrorReady()).toBe(true);
    return { mirrored, plain, next };
  }

  // With k = 150 vec0 takes 400 candidates, more than any filter lets through: both rank every
  // row that passes, so their answers agree exactly (with fewer, rows tied at the last Hamming
  // distance taken may differ: neither orders ties).
  async function expectSameAnswers(mirrored: SqliteStore, plain: SqliteStore, queries: Float32Array[], k = 150): Promise<number> {
    let rows = 0;
    for (const filter of filters()) {
      for (const query of queries) {
        const fromMirror = await mirrored.vectors.nearest(mirrored.reader, query, k, filter);
        const fromVec0 = await plain.vectors.nearest(plain.reader, query, k, filter);
        expect(fromMirror).toEqual(fromVec0);
        rows += fromMirror.length;
      }
    }
    return rows;
  }

  it("lets through exactly the rows vec0's filters let through", async () => {
    const { mirrored, plain, next } = await pair();
    const queries = Array.from({ length: 6 }, () => randomUnitVector(next, DIMENSIONS));
    // Not vacuous: most filters pass dozens of rows.
    expect(await expectSameAnswers(mirrored, plain, queries)).toBeGreaterThan(filters().length * queries.length * 30);
    // And the mirrored store's answers come from memory: with vec0's rows gone behind its back
    // (no change logged), it still finds what it held; the plain store finds nothing.
    await plain.transaction((tx) => Promise.resolve(connectionOf(tx).run("DELETE FROM memory_vectors")));
    const filter: VectorFilter = { within: within("ada"), nowMs: Date.now() };
    expect(await plain.vectors.nearest(plain.reader, queries[0] as Float32Array, 10, filter)).toEqual([]);
    expect(await mirrored.vectors.nearest(mirrored.reader, queries[0] as Float32Array, 10, filter)).toHaveLength(10);
  });

  /** A mirror of its own over the plain store's rows, with this shortlist, built. */
  async function shortlisting(shortlist: Shortlist): Promise<{ mirror: BitMirror; db: Db; next: () => number }> {
    const { plain, next } = await pair();
    const db = connectionOf(plain.reader);
    const mirror = new BitMirror(
      plain.reader,
      (error) => {
        throw error;
      },
      { shortlist },
    );
    expect(await mirror.settled()).toBe(true);
    return { mirror, db, next };
  }

  it("shortlists the rows nearest by Hamming distance, and no more than asked", async () => {
    // A shortlist of exactly the candidates asked: the answer is the bit scan's alone.
    const { mirror, db, next } = await shortlisting({ perCandidate: 1, rowsPerShortlisted: Infinity });
    const rows = db.all<{ pk: number; bits: Buffer; vis_key: string; owner_key: string; project_key: string; type: string; agent_id: string; confidence: number; expires_ms: number }>(
      "SELECT pk, bits, vis_key, owner_key, project_key, type, agent_id, confidence, expires_ms FROM memory_vectors",
    );
    const quantized = (vector: Float32Array): Uint8Array => {
      const bytes = new Uint8Array(vector.length / 8);
      vector.forEach((value, index) => {
        if (value > 0) bytes[index >> 3] = (bytes[index >> 3] as number) | (1 << (index & 7));
      });
      return bytes;
    };
    // The layout vec0 quantizes to.
    const probe = randomUnitVector(next, DIMENSIONS);
    expect(Buffer.from(quantized(probe))).toEqual(db.get<{ bits: Buffer }>("SELECT vec_quantize_binary(?) AS bits", probe)?.bits);
    const hamming = (a: Uint8Array, b: Uint8Array): number => a.reduce((sum, byte, index) => sum + [...((byte ^ (b[index] as number)) >>> 0).toString(2)].filter((bit) => bit === "1").length, 0);
    for (let round = 0; round < 8; round++) {
      const query = randomUnitVector(next, DIMENSIONS);
      const bits = quantized(query);
      for (const filter of [
        { column: "vis_key" as const, keys: ["g", "a:ada", "p:apollo"], nowMs: Date.now() },
        { column: "owner_key" as const, keys: ["", "bo"], nowMs: Date.now(), types: ["skill"], confidenceMin: 0.3 },
        { column: "vis_key" as const, keys: ["p:apollo", "p:zeus"], nowMs: Date.now(), agentId: "cy", projectKey: "zeus" },
      ]) {
        const passing = rows.filter(
          (row) =>
            filter.keys.includes(filter.column === "vis_key" ? row.vis_key : row.owner_key) &&
            row.expires_ms > filter.nowMs &&
            (filter.types === undefined || filter.types.includes(row.type)) &&
            (filter.confidenceMin === undefined || row.confidence >= filter.confidenceMin) &&
            (filter.agentId === undefined || row.agent_id === filter.agentId) &&
            (filter.projectKey === undefined || row.project_key === filter.projectKey),
        );
        const distance = new Map(passing.map((row) => [row.pk, hamming(new Uint8Array(row.bits), bits)]));
        const taken = mirror.candidates(query, 20, filter) ?? [];
        expect(taken).toHaveLength(Math.min(20, passing.length));
        expect(taken.every((pk) => distance.has(pk))).toBe(true);
        const farthestTaken = Math.max(...taken.map((pk) => distance.get(pk) as number));
        const nearestLeft = Math.min(...passing.filter((row) => !taken.includes(row.pk)).map((row) => distance.get(row.pk) as number));
        expect(farthestTaken).toBeLessThanOrEqual(nearestLeft);
      }
    }
    mirror.close();
  });

  it("picks the candidates of its shortlist by the int8 components' cosine", async () => {
    // A shortlist of every row: the answer is the int8 ranking's alone.
    const { mirror, db, next } = await shortlisting({ perCandidate: ENTRIES, rowsPerShortlisted: 1 });
    const rows = db.all<{ pk: number; embedding: Buffer; vis_key: string }>(
      "SELECT v.pk AS pk, e.embedding AS embedding, v.vis_key AS vis_key FROM memory_vectors AS v JOIN memory_embeddings AS e ON e.pk = v.pk WHERE v.expires_ms > ?",
      Date.now(),
    );
    const cosine = (a: { components: Int8Array; norm: number }, b: { components: Int8Array; norm: number }): number =>
      a.components.reduce((sum, value, index) => sum + value * (b.components[index] as number), 0) / (a.norm * b.norm);
    const held = rows
      .filter((row) => ["g", "a:ada"].includes(row.vis_key))
      .map((row) => ({ pk: row.pk, int8: int8Of(new Float32Array(new Uint8Array(row.embedding).buffer)) }));
    expect(held.length).toBeGreaterThan(100);
    for (let round = 0; round < 5; round++) {
      const query = randomUnitVector(next, DIMENSIONS);
      const asInt8 = int8Of(query);
      const expected = held
        .map((row) => ({ pk: row.pk, similarity: cosine(row.int8, asInt8) }))
        .sort((a, b) => b.similarity - a.similarity)
        .slice(0, 15)
        .map((row) => row.pk);
      // Which, not in what order: the caller ranks them by exact cosine.
      expect(mirror.candidates(query, 15, { column: "vis_key", keys: ["g", "a:ada"], nowMs: Date.now() })?.sort((a, b) => a - b)).toEqual(expected.sort((a, b) => a - b));
    }
    // int8 keeps the ranking of the exact cosine at its top: the nearest row by exact cosine is
    // the int8 ranking's first for every query here.
    const floats = rows.map((row) => ({ pk: row.pk, vector: new Float32Array(new Uint8Array(row.embedding).buffer), visible: ["g", "a:ada"].includes(row.vis_key) }));
    for (let round = 0; round < 5; round++) {
      const query = randomUnitVector(next, DIMENSIONS);
      const exact = floats.filter((row) => row.visible).sort((a, b) => cosineDistance(a.vector, query) - cosineDistance(b.vector, query));
      expect(mirror.candidates(query, 1, { column: "vis_key", keys: ["g", "a:ada"], nowMs: Date.now() })).toEqual([exact[0]?.pk]);
    }
    mirror.close();
  });

  it("follows puts, deletes, metadata changes and renames at the next query, and never a rolled-back put", async () => {
    const { mirrored, plain, next } = await pair();
    const query = randomUnitVector(next, DIMENSIONS);
    const nearest = async (): Promise<number | undefined> => (await mirrored.vectors.nearest(mirrored.reader, query, 1, { within: within("ada"), nowMs: Date.now() }))[0]?.pk;

    const added = await mirrored.transaction(async (tx) => {
      const pk = await mirrored.memory.insert(tx, newMemoryRow("the query itself", "ada"), []);
      await mirrored.vectors.put(tx, pk, query, meta({ agentId: "ada" }));
      return pk;
    });
    expect(await nearest()).toBe(added);

    // Made private to another agent: ada no longer sees it; bo, its owner, does.
    await mirrored.transaction((tx) => mirrored.vectors.updateMeta(tx, added, meta({ visKey: "a:bo", ownerKey: "bo", agentId: "bo" })));
    expect(await nearest()).not.toBe(added);
    expect((await mirrored.vectors.nearest(mirrored.reader, query, 1, { within: within("bo"), nowMs: Date.now() }))[0]?.pk).toBe(added);

    // Its author renamed: the private entry follows to the new owner.
    await mirrored.transaction((tx) => mirrored.vectors.renameAgent(tx, "bo", "bea"));
    expect((await mirrored.vectors.nearest(mirrored.reader, query, 1, { within: within("bea"), nowMs: Date.now() }))[0]?.pk).toBe(added);
    expect((await mirrored.vectors.nearest(mirrored.reader, query, 1, { within: within("bo"), nowMs: Date.now() }))[0]?.pk).not.toBe(added);

    await mirrored.transaction((tx) => mirrored.vectors.delete(tx, added));
    expect((await mirrored.vectors.nearest(mirrored.reader, query, 1, { within: within("bea"), nowMs: Date.now() }))[0]?.pk).not.toBe(added);

    await expect(
      mirrored.transaction(async (tx) => {
        const pk = await mirrored.memory.insert(tx, newMemoryRow("rolled back", "ada"), []);
        await mirrored.vectors.put(tx, pk, query, meta({ agentId: "ada" }));
        throw new Error("roll back");
      }),
    ).rejects.toThrow("roll back");
    expect(await nearest()).not.toBe(added);

    await expectSameAnswers(mirrored, plain, [query, randomUnitVector(next, DIMENSIONS)]);
  });

  // The mirror reads the log through the writer between its transactions (its cache is warm) and
  // through the reader while one is open: a put it saw before its rollback would stay in the
  // mirror, and the next put, given the same seq, would never reach it.
  it("never takes in a put of a transaction still open, even one a query runs beside", async () => {
    const { mirrored, next } = await pair();
    const query = randomUnitVector(next, DIMENSIONS);
    const filter = (): VectorFilter => ({ within: within("ada"), nowMs: Date.now() });
    const nearest = async (to: Float32Array): Promise<number | undefined> => (await mirrored.vectors.nearest(mirrored.reader, to, 1, filter()))[0]?.pk;
    let uncommitted = 0;
    let seenDuring: number | undefined;
    await expect(
      mirrored.transaction(async (tx) => {
        uncommitted = await mirrored.memory.insert(tx, newMemoryRow("not yet committed", "ada"), []);
        await mirrored.vectors.put(tx, uncommitted, query, meta({ agentId: "ada" }));
        await new Promise((resolve) => setTimeout(resolve, 20));
        seenDuring = await nearest(query);
        throw new Error("roll back");
      }),
    ).rejects.toThrow("roll back");
    expect(uncommitted).toBeGreaterThan(0);
    expect(seenDuring).not.toBe(uncommitted);
    // The next put takes the same seq in the log (and here the same pk) with another vector.
    const other = randomUnitVector(next, DIMENSIONS);
    const committed = await mirrored.transaction(async (tx) => {
      const pk = await mirrored.memory.insert(tx, newMemoryRow("committed", "ada"), []);
      await mirrored.vectors.put(tx, pk, other, meta({ agentId: "ada" }));
      return pk;
    });
    expect(await nearest(other)).toBe(committed);
  });

  it("follows another connection's writes and a new model, which empties it", async () => {
    const { mirrored, plain, next } = await pair();
    const query = randomUnitVector(next, DIMENSIONS);
    // Written through the plain store: the mirror sees it in the change log.
    const elsewhere = await plain.transaction(async (tx) => {
      const pk = await plain.memory.insert(tx, newMemoryRow("from the other connection", "cy"), []);
      await plain.vectors.put(tx, pk, query, meta({ agentId: "cy" }));
      return pk;
    });
    expect((await mirrored.vectors.nearest(mirrored.reader, query, 1, { within: within("ada"), nowMs: Date.now() }))[0]?.pk).toBe(elsewhere);

    await plain.vectors.ensure("another-model", DIMENSIONS);
    expect(await mirrored.vectors.nearest(mirrored.reader, query, 10, { within: within("ada"), nowMs: Date.now() })).toEqual([]);
  });

  it("keeps no copy of a store past its row limit, which follows the HNSW threshold above 200,000", async () => {
    const { plain, next } = await pair();
    const failOnError = (error: unknown): never => {
      throw error;
    };
    const under = new BitMirror(plain.reader, failOnError, { maxRows: ENTRIES - 1 });
    expect(await under.settled()).toBe(false);
    expect(under.status).toBe("off");
    under.close();

    const atLimit = new BitMirror(plain.reader, failOnError, { maxRows: ENTRIES });
    expect(await atLimit.settled()).toBe(true);
    // One more row, written by another connection, takes the store past the limit: the copy is dropped.
    await plain.transaction(async (tx) => {
      const pk = await plain.memory.insert(tx, newMemoryRow("one past the limit", "ada"), []);
      await plain.vectors.put(tx, pk, randomUnitVector(next, DIMENSIONS), meta());
    });
    expect(await atLimit.settled()).toBe(false);
    expect(atLimit.status).toBe("off");
    atLimit.close();

    // A store below the HNSW threshold is never left to vec0's scan.
    expect(mirrorMaxRows(150_000)).toBe(MIRROR_MAX_ROWS);
    expect(mirrorMaxRows(500_000)).toBe(500_000);
  });
});
