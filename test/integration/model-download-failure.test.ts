import { readdirSync, rmSync } from "node:fs";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { embeddingsHealth, MODEL_NAME, modelMirror, type ModelMirror } from "../helpers/model-mirror.js";
import { startTestServer, tempDir } from "../helpers/server.js";
import { eventually } from "../helpers/wait.js";

// The embedding thread keeps a loaded model for every later server of the process, but a
// downloaded one only for servers of the same DATA_DIR: a successful download elsewhere in this
// process (model-download.test.ts) never stands in for a mirror that fails.

describe("EMBEDDING_MODEL=bge-small-en-v1.5 from a mirror that fails (EMBEDDING_MODEL_URL)", () => {
  const work = tempDir("cairn-download-");
  let served: ModelMirror;
  beforeAll(async () => {
    served = await modelMirror(work);
  });
  afterAll(() => {
    served.server.close();
    rmSync(work, { recursive: true, force: true });
  });

  it("reports the model unavailable when the mirror has no archive or a broken one, and keeps nothing of it", async () => {
    for (const mode of ["missing", "garbage"] as const) {
      served.answer.mode = mode;
      const dataDir = join(work, `data-${mode}`);
      const server = await startTestServer({ DATA_DIR: dataDir, EMBEDDING_MODEL: "bge-small-en-v1.5", EMBEDDING_MODEL_URL: served.url });
      try {
        expect(await eventually(async () => (await embeddingsHealth(server)) === "unavailable", 30_000)).toBe(true);
        // Keyword search still answers.
        const agent = await server.agent("offline");
        const found = await server.request("/memory/search?q=anything", { as: agent });
        expect(found.headers.get("x-search-mode")).toBe("keyword");
      } finally {
        await server.close();
      }
      expect(readdirSync(join(dataDir, "models"))).toEqual([]);
    }
    expect(served.requests.filter((path) => path === `/${MODEL_NAME}.tar.gz`).length).toBeGreaterThanOrEqual(2);
  });
});
