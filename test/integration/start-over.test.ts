import { setTimeout as sleep } from "node:timers/promises";
import { describe, expect, it } from "vitest";
import { loadConfig } from "../../src/core/config.js";
import { silentLogger } from "../../src/core/log.js";
import type { Embedder } from "../../src/embed/embedder.js";
import { hashEmbedder } from "../../src/embed/hash.js";
import { openServices } from "../../src/services/index.js";
import { tempDir, testEnv } from "../helpers/server.js";

// What warms up after a start (the MCP endpoint's modules, the redaction rules) waits for the
// embedding model, the longest part of a start: `listening` says when the start is over.
describe("a server's start", () => {
  it("is over once the model has loaded, not when the server listens", async () => {
    let loaded = (_embedder: Embedder): void => undefined;
    const model = new Promise<Embedder>((resolve) => (loaded = resolve));
    const services = await openServices({ config: loadConfig(testEnv(tempDir(), { EMBEDDING_MODEL: "hash" })), log: silentLogger, embedderLoader: () => model });
    try {
      let over = false;
      const listening = services.listening(0).then(() => (over = true));
      await sleep(100);
      expect(over).toBe(false);
      expect((await services.health()).embeddings).toBe("loading");
      loaded(hashEmbedder());
      await listening;
      expect((await services.health()).embeddings).toBe("ready");
    } finally {
      await services.close();
    }
  });
});
