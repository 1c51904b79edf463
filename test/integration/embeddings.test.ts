import { describe, expect, it } from "vitest";
import { startTestServer } from "../helpers/server.js";

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
