// Pre-seeded stores, written through the project's store modules (not HTTP) so 100,000 entries
// take minutes rather than an hour, and cached under /tmp/cairn-bench-cache keyed by size, corpus
// and schema, so only the first run pays for the embedding.
import { spawn } from "node:child_process";
import { createHash, randomUUID } from "node:crypto";
import { chmodSync, copyFileSync, existsSync, mkdirSync, readFileSync, readdirSync, renameSync, rmSync, statSync } from "node:fs";
import { join } from "node:path";
import { newId } from "../src/core/ids.js";
import { migrationsDir } from "../src/core/paths.js";
import type { Embedder } from "../src/embed/embedder.js";
import { BUNDLED_MODEL_ID, embedderLoaderFor } from "../src/embed/models.js";
import type { NewMemoryRow } from "../src/store/memory.js";
import { openStore } from "../src/store/open.js";
import type { AnnSettings } from "../src/store/sqlite/ann.js";
import { SqliteStore } from "../src/store/sqlite/store.js";
import { VECTOR_LAYOUT, type SqliteVectorIndex } from "../src/store/sqlite/vectors.js";
import type { Store } from "../src/store/store.js";
import { INSTANCE_ID } from "../src/services/instance.js";
import { MerkleSummaries } from "../src/services/merkle/service.js";
import { contentKey, vectorMetaOf } from "../src/services/memory-records.js";
import { CORPUS_VERSION, noteStream, type Note } from "./corpus.js";
import { round, type Progress } from "./lib.js";
import { benchDatabaseUrl, cloneInto, databaseEnv, seedTemplate } from "./postgres.js";

// BENCH_CACHE_DIR: another cache, e.g. for a branch whose migrations must not reach the shared one.
export const CACHE_DIR = process.env.BENCH_CACHE_DIR ?? "/tmp/cairn-bench-cache";
/** The seeded entries' stream; the timed writes use other seeds. */
const SEED_STREAM = 1001;
const AUTHORS = ["planner", "coder", "reviewer", "tester"];
const EMBED_BATCH = 512;
const HISTORY_MS = 90 * 86_400_000;
const SEED_VERSION = "2";

export interface SeededStore {
  file: string;
  entries: number;
  /** Set when this run built it (seconds it took), absent when it came from the cache. */
  builtSeconds?: number;
  sizeMb: number;
}

/**
 * Changes when the vector layout, the bundled model's vectors or the base schema (the first
 * migration, which the seeder writes memory rows into) changes. Later migrations do not invalidate a cached store: like any user's
 * database it is migrated forward when it is used (see `migrateForward`).
 */
function schemaFingerprint(): string {
  // The model's id inside the hash, not beside it: a PostgreSQL template's name has room for no more.
  // SEED_VERSION: how the seeder writes a store (2: with the instance id and merkle leaves a server's first start adds).
  const hash = createHash("sha256").update(VECTOR_LAYOUT).update(BUNDLED_MODEL_ID).update(SEED_VERSION);
  const base = readdirSync(join(migrationsDir, "sqlite")).sort()[0];
  if (base !== undefined) hash.update(base).update(readFileSync(join(migrationsDir, "sqlite", base)));
  return hash.digest("hex").slice(0, 10);
}

/** Applies the migrations a cached store predates, once, so no timed server start pays for them. */
async function migrateForward(file: string): Promise<void> {
  await SqliteStore.open(file).close();
  for (const suffix of ["-wal", "-shm"]) rmSync(`${file}${suffix}`, { force: true });
}

const cacheFileFor = (entries: number): string =>
  join(CACHE_DIR, `store-${entries}-corpus${CORPUS_VERSION}-schema${schemaFingerprint()}.db`);

/**
 * The cached store of `entries` entries, built first if missing. The build runs in a child
 * process: onnxruntime's native addon cannot be loaded by a second worker thread in one process,
 * and the benchmark process should not keep a model in memory anyway.
 */
export async function seededStore(entries: number, progress: Progress): Promise<SeededStore> {
  const file = cacheFileFor(entries);
  let builtSeconds: number | undefined;
  if (!existsSync(file)) {
    const started = performance.now();
    progress(`seeding ${entries.toLocaleString("en")} entries into ${file} (once; later runs reuse it)`);
    const child = spawn(process.execPath, [...process.execArgv, join(import.meta.dirname, "seed-store.ts"), String(entries)], {
      stdio: ["ignore", "inherit", "inherit"],
    });
    const code = await new Promise<number | null>((resolve) => child.once("exit", resolve));
    if (code !== 0 || !existsSync(file)) throw new Error(`seeding ${entries} entries failed (exit ${code})`);
    builtSeconds = round((performance.now() - started) / 1000);
  }
  await migrateForward(file);
  return { file, entries, sizeMb: round(statSync(file).size / 2 ** 20), ...(builtSeconds === undefined ? {} : { builtSeconds }) };
}

/** Builds the cache file for `entries` (in this process: the child that `seededStore` starts). */
export async function buildCachedStore(entries: number, progress: Progress): Promise<void> {
  const file = cacheFileFor(entries);
  mkdirSync(CACHE_DIR, { recursive: true });
  const building = `${file}.building-${process.pid}`;
  const started = performance.now();
  const embedder = await embedderLoaderFor({ EMBEDDING_MODEL: "use-lite", DATA_DIR: CACHE_DIR })();
  try {
    await buildStore(building, entries, embedder, progress);
  } finally {
    await embedder.close();
  }
  for (const suffix of ["-wal", "-shm"]) rmSync(`${building}${suffix}`, { force: true });
  renameSync(building, file);
  progress(`seeded ${entries.toLocaleString("en")} entries in ${round((performance.now() - started) / 1000)} s`);
}

async function buildStore(file: string, entries: number, embedder: Embedder, progress: Progress): Promise<void> {
  // The server would reset (and re-embed) an index built for another model.
  if (embedder.id !== BUNDLED_MODEL_ID || embedder.dimensions !== 512) {
    throw new Error(`expected ${BUNDLED_MODEL_ID}/512, the embedder is ${embedder.id}/${embedder.dimensions}`);
  }
  const store = SqliteStore.open(file);
  try {
    await store.vectors.ensure(BUNDLED_MODEL_ID, 512);
    const next = noteStream(SEED_STREAM);
    const firstAt = Date.now() - HISTORY_MS;
    const batches = Math.ceil(entries / EMBED_BATCH);
    const batchOf = (batch: number): Note[] =>
      Array.from({ length: Math.min(EMBED_BATCH, entries - batch * EMBED_BATCH) }, () => next());
    // Embedding the next batch (in the worker thread) overlaps inserting this one.
    let notes = batchOf(0);
    let vectors = embedder.embed(notes.map((note) => note.content));
    for (let batch = 0; batch < batches; batch++) {
      const ready = await vectors;
      const current = notes;
      if (batch + 1 < batches) {
        notes = batchOf(batch + 1);
        vectors = embedder.embed(notes.map((note) => note.content));
      }
      await insertBatch(store, current, ready, batch * EMBED_BATCH, entries, firstAt);
      const done = Math.min(entries, (batch + 1) * EMBED_BATCH);
      if ((batch + 1) % 20 === 0) progress(`  ${done.toLocaleString("en")} / ${entries.toLocaleString("en")}`);
    }
    // What a server's first start adds, done once here: else every timed start stamps every entry.
    const instanceId = await store.transaction((tx) => store.meta.claim(tx, INSTANCE_ID, randomUUID()));
    await new MerkleSummaries(store, instanceId).stampUnstamped();
  } finally {
    await store.close();
  }
}

/** One transaction per batch: rows (FTS follows by trigger), tags and vectors. */
function insertBatch(store: SqliteStore, notes: Note[], vectors: Float32Array[], offset: number, entries: number, firstAt: number): Promise<void> {
  return store.transaction(async (tx) => {
    for (const [index, note] of notes.entries()) {
      const vector = vectors[index];
      if (!vector) throw new Error("embedder returned too few vectors");
      const position = offset + index;
      const at = new Date(firstAt + Math.floor((position / entries) * HISTORY_MS)).toISOString();
      const row: NewMemoryRow = {
        id: newId(),
        type: "memory",
        agent_id: AUTHORS[position % AUTHORS.length] ?? "planner",
        project: null,
        scope: "project",
        content: note.content,
        content_key: contentKey(note.content),
        confidence: 1,
        parents: "[]",
        tags: JSON.stringify(note.tags),
        created_at: at,
        updated_at: at,
        version: 1,
        expires_at: null,
        embedding_model: BUNDLED_MODEL_ID,
        source: null,
        source_kind: null,
      };
      const pk = await store.memory.insert(tx, row, note.tags);
      await store.vectors.put(tx, pk, vector, vectorMetaOf(row));
    }
  });
}

/**
 * Copies a cached store into a fresh data directory as its database; on PostgreSQL, gives the
 * directory a database cloned from the store's template (built from the SQLite file once).
 */
export async function installStore(store: SeededStore, dataDir: string, progress: Progress): Promise<void> {
  if (benchDatabaseUrl()) {
    await cloneInto(await seedTemplate(store.file, store.entries, progress), dataDir);
    return;
  }
  const target = join(dataDir, "cairn.db");
  copyFileSync(store.file, target);
  chmodSync(target, 0o600);
  // The store's HNSW index, when a benchmark built one before (annStore), so it is loaded, not rebuilt.
  const header = `${store.file}.hnsw.json`;
  if (existsSync(header)) {
    const named = (JSON.parse(readFileSync(header, "utf8")) as { file: string }).file;
    if (existsSync(join(CACHE_DIR, named))) {
      copyFileSync(join(CACHE_DIR, named), join(dataDir, named));
      copyFileSync(header, `${target}.hnsw.json`);
    }
  }
}

/**
 * Opens an installed store with its HNSW index (SQLite) and waits until the index is ready,
 * printing how long that took; an index built here is copied beside the cached store for later runs.
 */
export async function annStore(store: SeededStore, dataDir: string, progress: Progress, ann: Partial<AnnSettings> = {}): Promise<{ store: Store; annSeconds: number | null }> {
  const file = join(dataDir, "cairn.db");
  const opened = await openStore({ databaseUrl: databaseEnv(dataDir).DATABASE_URL, file, ann });
  if (benchDatabaseUrl()) return { store: opened, annSeconds: null };
  const started = performance.now();
  const ready = await (opened.vectors as SqliteVectorIndex).annReady();
  const annSeconds = round((performance.now() - started) / 1000);
  // The bit mirror too, as a running server has it once it has started.
  await (opened.vectors as SqliteVectorIndex).mirrorReady();
  progress(`HNSW index of ${store.entries.toLocaleString("en")} entries: ${ready ? "ready" : "not built (below the threshold)"} in ${annSeconds} s`);
  const header = `${file}.hnsw.json`;
  if (ready && !existsSync(`${store.file}.hnsw.json`) && existsSync(header)) {
    const named = (JSON.parse(readFileSync(header, "utf8")) as { file: string }).file;
    copyFileSync(join(dataDir, named), join(CACHE_DIR, named));
    copyFileSync(header, `${store.file}.hnsw.json`);
  }
  return { store: opened, annSeconds: ready ? annSeconds : null };
}
