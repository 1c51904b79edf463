import { describe, expect, it } from "vitest";
import { BUNDLED_MODEL_ID, embedderLoaderFor } from "../../src/embed/models.js";
import { startTestServer, tempDir } from "../helpers/server.js";

describe("the bundled model in one process", () => {
  it("serves several servers, one after another and side by side", async () => {
    // onnxruntime-node cannot be reloaded in a new thread, so every server shares one thread.
    for (let round = 0; round < 2; round++) {
      const servers = [await startTestServer({ EMBEDDING_MODEL: "use-lite" }), await startTestServer({ EMBEDDING_MODEL: "use-lite" })];
      for (const server of servers) {
        const agent = await server.agent("reader");
        await server.request("/memory", { as: agent, body: { content: "The football match ended in a draw" } });
        const found = await server.request<{ content: string }[]>("/memory/search?q=soccer%20game%20tied", { as: agent });
        expect(found.headers.get("x-search-mode")).toBe("hybrid");
        expect(found.body[0]?.content).toContain("football");
      }
      for (const server of servers) await server.close();
    }
  });
});

describe("the bundled model's vectors", () => {
  it("are the same for a text alone and for the same text among others", async () => {
    const embedder = await embedderLoaderFor({ EMBEDDING_MODEL: "use-lite", EMBEDDING_MODEL_DIR: undefined, DATA_DIR: tempDir() })();
    try {
      const text = "Deploys run from the main branch every Friday";
      const [alone] = await embedder.embed([text]);
      // Neighbours of other lengths and other magnitudes: a batch-wide activation scale would show.
      const among = await embedder.embed(["x", "The soccer game finished tied after extra time and a long argument about the referee's call", text, "database migrations"]);
      expect(Array.from(among[2] as Float32Array)).toEqual(Array.from(alone as Float32Array));
      expect(embedder.id).toBe(BUNDLED_MODEL_ID);
    } finally {
      await embedder.close();
    }
  });
});
