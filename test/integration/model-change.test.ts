import { rmSync } from "node:fs";
import { afterAll, describe, expect, it } from "vitest";
import { BUNDLED_MODEL_ID } from "../../src/embed/models.js";
import { write, type MemoryEntry, type SearchHit } from "../helpers/memory.js";
import { startTestServer, tempDir } from "../helpers/server.js";
import { eventually } from "../helpers/wait.js";

/** Loading the bundled model and re-embedding a few entries, on a busy machine. */
const SLOW_MS = 60_000;

describe("a store embedded by another model", () => {
  const dataDir = tempDir("cairn-model-change-");
  afterAll(() => rmSync(dataDir, { recursive: true, force: true }));

  // The upgrade from the fp32 bundled model (stored as "use-lite") takes this path: any stored id
  // other than the loaded model's resets the index and every entry is embedded again.
  it("is re-embedded with the bundled model on start, and then found by meaning", async () => {
    const before = await startTestServer({ DATA_DIR: dataDir, EMBEDDING_MODEL: "hash" });
    const agent = await before.agent("model-change-writer");
    const written: MemoryEntry[] = [];
    try {
      for (const content of ["The football match ended in a draw", "The invoice exporter writes one CSV file per month"]) {
        written.push(await write(before, agent, { content }));
      }
      for (const entry of written) expect(entry.embedding_model).toMatch(/^hash/);
    } finally {
      await before.close();
    }

    const after = await startTestServer({ DATA_DIR: dataDir, EMBEDDING_MODEL: "use-lite" });
    try {
      const reembedded = await eventually(async () => {
        const entries = await Promise.all(written.map((entry) => after.request<MemoryEntry>(`/memory/${entry.id}`, { as: agent })));
        return entries.every((entry) => entry.status === 200 && entry.body.embedding_model === BUNDLED_MODEL_ID);
      }, SLOW_MS);
      expect(reembedded).toBe(true);
      // No word in common with the note: only its new vector can find it.
      const response = await after.request<SearchHit[]>(`/memory/search?q=${encodeURIComponent("soccer game tied")}`, { as: agent });
      expect(response.status).toBe(200);
      expect(response.headers.get("x-search-mode")).toBe("hybrid");
      expect(response.body[0]).toMatchObject({ id: written[0]?.id, match: "semantic" });
    } finally {
      await after.close();
    }
  }, 2 * SLOW_MS);
});
