import { existsSync, readdirSync, rmSync } from "node:fs";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { embeddingsHealth, MODEL_NAME, modelMirror, type ModelMirror } from "../helpers/model-mirror.js";
import { startTestServer, tempDir } from "../helpers/server.js";
import { eventually } from "../helpers/wait.js";

// A failed download is tested in model-download-failure.test.ts: the embedding thread keeps a
// loaded model for every later server of the process, so a failure shows only in a process where
// no server has loaded the model yet.

describe("EMBEDDING_MODEL=bge-small-en-v1.5 from a mirror (EMBEDDING_MODEL_URL)", () => {
  const work = tempDir("cairn-download-");
  let served: ModelMirror;
  beforeAll(async () => {
    served = await modelMirror(work);
  });
  afterAll(() => {
    served.server.close();
    rmSync(work, { recursive: true, force: true });
  });

  it("downloads and unpacks the model into DATA_DIR/models on first use, then embeds and searches with it", async () => {
    const dataDir = join(work, "data-ok");
    const server = await startTestServer({ DATA_DIR: dataDir, EMBEDDING_MODEL: "bge-small-en-v1.5", EMBEDDING_MODEL_URL: served.url });
    try {
      expect(await eventually(async () => (await embeddingsHealth(server)) === "ready", 60_000)).toBe(true);
      const agent = await server.agent("downloaded");
      await server.request("/memory", { as: agent, body: { content: "The football match ended in a draw" } });
      const found = await server.request<{ content: string; similarity: number }[]>("/memory/search?q=soccer%20game%20tied", { as: agent });
      expect(found.headers.get("x-search-mode")).toBe("hybrid");
      expect(found.body[0]?.content).toContain("football");
      const entry = await server.request<{ embedding_model: string }>(`/memory?limit=1`, { as: agent });
      expect(JSON.stringify(entry.body)).toContain("bge-small-en-v1.5");
    } finally {
      await server.close();
    }
    expect(readdirSync(join(dataDir, "models"))).toEqual([MODEL_NAME]);
    expect(existsSync(join(dataDir, "models", MODEL_NAME, "model_optimized.onnx"))).toBe(true);
  });
});
