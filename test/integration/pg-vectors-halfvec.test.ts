import { rmSync } from "node:fs";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { newId } from "../../src/core/ids.js";
import { loadMigrations } from "../../src/store/migrations.js";
import { openStore } from "../../src/store/open.js";
import type { Store } from "../../src/store/store.js";
import { connectionOf } from "../../src/store/postgres/transactions.js";
import { CONNECTION_SEARCH_SETTINGS, searchSettings, vectorBytes } from "../../src/store/postgres/vectors.js";
import { NO_EXPIRY, type VectorMeta } from "../../src/store/vectors.js";
import { databaseUrlFor, onPostgres, withDatabase } from "../helpers/database.js";
import { newMemoryRow } from "../helpers/memory-rows.js";
import { tempDir } from "../helpers/server.js";
import { cosineDistance, randomUnitVector, seededUniform } from "../helpers/random-vectors.js";

// PostgreSQL's vector index is an HNSW graph over half-precision copies of the embeddings
// (migration 023, `createVectorIndex`); the distances a query answers are the full vectors' own.
const DIMENSIONS = 24;
const ENTRIES = 120;

const random = seededUniform;
const unitVector = (next: () => number): Float32Array => randomUnitVector(next, DIMENSIONS);

const meta: VectorMeta = { visKey: "g", ownerKey: "", projectKey: "", type: "memory", agentId: "writer", confidence: 1, expiresMs: NO_EXPIRY };

describe.runIf(onPostgres)("PostgreSQL's vector index on halfvec", () => {
  const dirs: string[] = [];
  const stores: Store[] = [];
  afterEach(async () => {
    for (const store of stores.splice(0)) await store.close();
    for (const dir of dirs.splice(0)) rmSync(dir, { recursive: true, force: true });
  });

  async function seeded(): Promise<{ dir: string; store: Store; vectors: Map<number, Float32Array> }> {
    const dir = tempDir();
    dirs.push(dir);
    const store = await openStore({ databaseUrl: databaseUrlFor(dir), file: join(dir, "cairn.db") });
    stores.push(store);
    await store.vectors.ensure("test-model", DIMENSIONS);
    const next = random(11);
    const vectors = new Map<number, Float32Array>();
    await store.transaction(async (tx) => {
      for (let i = 0; i < ENTRIES; i++) {
        const pk = await store.memory.insert(tx, newMemoryRow(`entry ${newId()}`), []);
        const vector = unitVector(next);
        await store.vectors.put(tx, pk, vector, meta);
        vectors.set(pk, vector);
      }
    });
    return { dir, store, vectors };
  }

  const indexDefinition = (dir: string): Promise<string | undefined> =>
    withDatabase(dir, async (db) => (await db.get<{ def: string }>("SELECT pg_get_indexdef('memory_embeddings_hnsw'::regclass) AS def"))?.def);

  const nearestOf = (store: Store, query: Float32Array, k: number) =>
    store.vectors.nearest(store.reader, query, k, { within: { viewpoint: { agentId: "reader", allProjects: false } }, nowMs: Date.now() });

  it("indexes the embeddings as halfvec, and answers each neighbour's exact distance, nearest first", async () => {
    const { dir, store, vectors } = await seeded();
    expect(await indexDefinition(dir)).toMatch(/USING hnsw \(\(\(embedding\)::halfvec\(24\)\) halfvec_cosine_ops\) WITH \(m='16', ef_construction='200'\)/);
    const query = vectors.values().next().value as Float32Array;
    const hits = await nearestOf(store, query, 10);
    const exact = [...vectors].map(([pk, vector]) => ({ pk, distance: cosineDistance(query, vector) })).sort((a, b) => a.distance - b.distance || a.pk - b.pk);
    // At this size the graph finds every true neighbour; the distances are float4's, not half precision's.
    expect(hits.map((hit) => hit.pk)).toEqual(exact.slice(0, 10).map((hit) => hit.pk));
    for (const [index, hit] of hits.entries()) expect(hit.distance).toBeCloseTo(exact[index]?.distance as number, 6);
    expect(hits[0]?.distance).toBeCloseTo(0, 6);
  });

  it("the search's query walks the halfvec index", async () => {
    const { dir, vectors } = await seeded();
    // As the search sends it: pgvector's binary form, a parameter cast to vector, then to halfvec.
    const query = vectorBytes(vectors.values().next().value as Float32Array);
    const plan = await withDatabase(dir, async (db) => {
      // A table this small is read in full unless the planner is told not to: the question is whether the index can answer the ordering.
      await db.run("SET enable_seqscan = off");
      const rows = await db.all<{ "QUERY PLAN": string }>(
        `EXPLAIN SELECT pk, embedding <=> ?::vector AS distance FROM memory_embeddings ORDER BY embedding::halfvec(${DIMENSIONS}) <=> ?::vector::halfvec(${DIMENSIONS}) LIMIT 10`,
        query,
        query,
      );
      return rows.map((row) => row["QUERY PLAN"]).join("\n");
    });
    expect(plan).toContain("Index Scan using memory_embeddings_hnsw");
  });

  it("gives back each vector exactly as it was put (pgvector's binary form both ways)", async () => {
    const { store, vectors } = await seeded();
    const read = await store.vectors.get(store.reader, [...vectors.keys()]);
    expect(read.size).toBe(vectors.size);
    for (const [pk, vector] of vectors) expect(Array.from(read.get(pk) ?? [])).toEqual(Array.from(vector));
  });

  it("every connection of a store's pool opens with the settings of a search of up to 125 neighbours", async () => {
    const { store } = await seeded();
    const db = connectionOf(store.reader);
    // Held at once, so the pool opens several connections.
    const settings = await Promise.all(
      Array.from({ length: 6 }, () =>
        db.get<{ ef: string; scan: string; backend: number }>(
          "SELECT current_setting('hnsw.ef_search') AS ef, current_setting('hnsw.iterative_scan') AS scan, pg_backend_pid() AS backend FROM pg_sleep(0.05)",
        ),
      ),
    );
    expect(new Set(settings.map((row) => row?.backend)).size).toBeGreaterThan(1);
    for (const row of settings) expect({ "hnsw.ef_search": row?.ef, "hnsw.iterative_scan": row?.scan }).toEqual(CONNECTION_SEARCH_SETTINGS);
    expect(CONNECTION_SEARCH_SETTINGS).toEqual(searchSettings("0.8.6", 125));
  });

  it("a database URL's own startup options are kept beside the search settings", async () => {
    const dir = tempDir();
    dirs.push(dir);
    await openStore({ databaseUrl: databaseUrlFor(dir), file: join(dir, "cairn.db") }).then((store) => store.close());
    const url = new URL(String(databaseUrlFor(dir)));
    url.searchParams.set("options", "-c application_name=cairn-options-test -c work_mem=7MB");
    const store = await openStore({ databaseUrl: url.toString(), file: join(dir, "cairn.db") });
    stores.push(store);
    const row = await connectionOf(store.reader).get<{ name: string; mem: string; ef: string; scan: string }>(
      "SELECT current_setting('application_name') AS name, current_setting('work_mem') AS mem, current_setting('hnsw.ef_search') AS ef, current_setting('hnsw.iterative_scan') AS scan",
    );
    expect(row).toEqual({ name: "cairn-options-test", mem: "7MB", ef: CONNECTION_SEARCH_SETTINGS["hnsw.ef_search"], scan: CONNECTION_SEARCH_SETTINGS["hnsw.iterative_scan"] });
  });

  it("migration 023 rebuilds an existing database's index on halfvec, and its searches are unchanged", async () => {
    const { dir, store, vectors } = await seeded();
    const query = [...vectors.values()][7] as Float32Array;
    const before = await nearestOf(store, query, 10);
    await store.close();
    stores.splice(stores.indexOf(store), 1);
    // The database as migration 022 left it: the graph over the full vectors, pgvector's defaults.
    await withDatabase(dir, async (db) => {
      await db.run("DROP INDEX memory_embeddings_hnsw");
      await db.run("CREATE INDEX memory_embeddings_hnsw ON memory_embeddings USING hnsw (embedding vector_cosine_ops)");
      await db.run("DELETE FROM schema_migrations WHERE version >= 23");
    });
    expect(await indexDefinition(dir)).toMatch(/USING hnsw \(embedding vector_cosine_ops\)$/);
    const reopened = await openStore({ databaseUrl: databaseUrlFor(dir), file: join(dir, "cairn.db") });
    stores.push(reopened);
    expect(await indexDefinition(dir)).toMatch(/\(\(embedding\)::halfvec\(24\)\) halfvec_cosine_ops\) WITH \(m='16', ef_construction='200'\)/);
    expect(await withDatabase(dir, (db) => db.get<{ version: number }>("SELECT max(version) AS version FROM schema_migrations"))).toEqual({ version: loadMigrations("postgres").at(-1)?.version });
    expect(await nearestOf(reopened, query, 10)).toEqual(before);
  });
});
