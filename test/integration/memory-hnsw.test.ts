import { existsSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect } from "vitest";
import { onPostgres } from "../helpers/database.js";
import { test } from "../helpers/fixtures.js";
import type { MemoryEntry } from "../helpers/memory.js";
import { startTestServer, type Credentials, type TestServer } from "../helpers/server.js";

/**
 * A SQLite server past VECTOR_ANN_THRESHOLD searches and checks each write for duplicates through
 * its HNSW index (src/store/sqlite/ann.ts), built in a worker thread: what a write committed is
 * found by the next search and the next write, and the index is saved beside the database at close.
 */
const THRESHOLD = 30;

type WriteResult = MemoryEntry & { duplicate_of?: string };

const health = (server: TestServer) => server.request<{ vector_index?: string; vector_mirror?: string }>("/health");

async function indexReady(server: TestServer): Promise<void> {
  await expect.poll(async () => (await health(server)).body.vector_index, { timeout: 60_000, interval: 50 }).toBe("ready");
}

const write = (server: TestServer, as: Credentials, content: string) => server.request<WriteResult>("/memory", { as, body: { content } });

const searchIds = async (server: TestServer, as: Credentials, q: string): Promise<{ mode: string | null; ids: string[] }> => {
  const found = await server.request<{ id: string }[]>(`/memory/search?q=${encodeURIComponent(q)}&limit=5`, { as });
  expect(found.status).toBe(200);
  return { mode: found.headers.get("x-search-mode"), ids: found.body.map((hit) => hit.id) };
};

describe.skipIf(onPostgres)("the HNSW index of a SQLite server", () => {
  const it = test.extend("writer", ({ server }) => server.agent("writer"));
  it.override("serverEnv", { VECTOR_ANN_THRESHOLD: String(THRESHOLD) });

  it("is built past the threshold, then sees every write at the next search and the next write", async ({ server, writer }) => {
    expect((await health(server)).body.vector_index).toBe("off");
    const ids: string[] = [];
    for (let i = 0; i < THRESHOLD + 10; i++) {
      const written = await write(server, writer, `Deploy note ${i}: service ${i * 7} restarts at ${i % 24}:00 with flag alpha-${i}`);
      expect(written.status).toBe(201);
      ids.push(written.body.id);
    }
    // The bit mirror, started by the first scan once a model's vectors exist, is kept beside the HNSW.
    await expect.poll(async () => (await health(server)).body.vector_mirror, { timeout: 30_000, interval: 50 }).toBe("ready");
    // Counted again within seconds of a search, then built in the thread.
    await expect
      .poll(async () => (await searchIds(server, writer, "Deploy note 3")).ids.length > 0 && (await health(server)).body.vector_index, { timeout: 60_000, interval: 200 })
      .toBe("ready");

    const found = await searchIds(server, writer, "Deploy note 17: service 119 restarts at 17:00 with flag alpha-17");
    expect(found.mode).not.toBe("keyword");
    expect(found.ids[0]).toBe(ids[17]);

    // Written after the build: found by the next write and the next search.
    const fresh = await write(server, writer, "Rollback drill: the canary fleet drains in ninety seconds");
    expect(fresh.status).toBe(201);
    const again = await write(server, writer, "Rollback drill: the canary fleet drains in ninety seconds");
    expect(again.status).toBe(200);
    expect(again.body.duplicate_of).toBe(fresh.body.id);
    expect((await searchIds(server, writer, "canary fleet drains")).ids[0]).toBe(fresh.body.id);
    await indexReady(server);
  });

  it("saves the index beside the database when the server stops, and loads it at the next start", async ({ server, writer }) => {
    for (let i = 0; i < THRESHOLD + 5; i++) expect((await write(server, writer, `Runbook step ${i}: rotate key ring ${i * 13}`)).status).toBe(201);
    await expect.poll(async () => (await searchIds(server, writer, "Runbook step")).ids.length > 0 && (await health(server)).body.vector_index, { timeout: 60_000, interval: 200 }).toBe("ready");
    const last = await write(server, writer, "Runbook step final: page the on-call owner");
    expect(last.status).toBe(201);
    await server.server.close();
    const header = join(server.dataDir, "cairn.db.hnsw.json");
    expect(existsSync(header)).toBe(true);
    const saved = JSON.parse(readFileSync(header, "utf8")) as { file: string; count: number };
    expect(saved.count).toBe(THRESHOLD + 6);
    expect(existsSync(join(server.dataDir, saved.file))).toBe(true);

    const restarted = await startTestServer({ DATA_DIR: server.dataDir, VECTOR_ANN_THRESHOLD: String(THRESHOLD) });
    try {
      await indexReady(restarted);
      // Loaded, not rebuilt: the header names the same file.
      expect((JSON.parse(readFileSync(header, "utf8")) as { file: string }).file).toBe(saved.file);
      expect((await searchIds(restarted, writer, "page the on-call owner")).ids[0]).toBe(last.body.id);
    } finally {
      await restarted.close();
    }
  });
});
