import { copyFileSync, existsSync, mkdirSync, readdirSync, readFileSync, rmSync } from "node:fs";
import { createServer, type Server } from "node:http";
import { join, resolve } from "node:path";
import { create } from "tar";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startTestServer, tempDir, type TestServer } from "../helpers/server.js";
import { eventually } from "../helpers/wait.js";

const BUNDLED = resolve(import.meta.dirname, "../../models/universal-sentence-encoder-lite");
const NAME = "fast-bge-small-en-v1.5";

/**
 * A mirror on loopback serving an archive laid out as the real one is (a folder of that name with
 * `model_optimized.onnx` and the tokenizer files). The weights are the bundled model's: what is
 * under test is fetching, unpacking and loading, not bge's numbers.
 */
function mirror(archive: string): Promise<{ server: Server; url: string; requests: string[]; answer: { mode: "archive" | "missing" | "garbage" } }> {
  const requests: string[] = [];
  const answer: { mode: "archive" | "missing" | "garbage" } = { mode: "archive" };
  const server = createServer((request, response) => {
    requests.push(request.url ?? "");
    if (answer.mode === "missing" || request.url !== `/${NAME}.tar.gz`) response.writeHead(404).end("not here");
    else if (answer.mode === "garbage") response.writeHead(200, { "content-type": "application/octet-stream" }).end(Buffer.alloc(4096, 7));
    else response.writeHead(200, { "content-type": "application/octet-stream" }).end(readFileSync(archive));
  });
  return new Promise((resolveListen) =>
    server.listen(0, "127.0.0.1", () => resolveListen({ server, url: `http://127.0.0.1:${(server.address() as { port: number }).port}`, requests, answer })),
  );
}

const health = async (server: TestServer): Promise<string> => (await server.request<{ embeddings: string }>("/health")).body.embeddings;

describe("EMBEDDING_MODEL=bge-small-en-v1.5 from a mirror (EMBEDDING_MODEL_URL)", () => {
  const work = tempDir("cairn-download-");
  let served: Awaited<ReturnType<typeof mirror>>;
  beforeAll(async () => {
    const folder = join(work, "source", NAME);
    mkdirSync(folder, { recursive: true });
    copyFileSync(join(BUNDLED, "model.onnx"), join(folder, "model_optimized.onnx"));
    for (const file of ["tokenizer.json", "config.json", "tokenizer_config.json", "special_tokens_map.json"]) copyFileSync(join(BUNDLED, file), join(folder, file));
    await create({ gzip: true, file: join(work, "archive.tar.gz"), cwd: join(work, "source") }, [NAME]);
    served = await mirror(join(work, "archive.tar.gz"));
  });
  afterAll(() => {
    served.server.close();
    rmSync(work, { recursive: true, force: true });
  });

  const start = (dataDir: string) => startTestServer({ DATA_DIR: dataDir, EMBEDDING_MODEL: "bge-small-en-v1.5", EMBEDDING_MODEL_URL: served.url });

  it("reports the model unavailable when the mirror has no archive or a broken one, and keeps nothing of it", async () => {
    for (const mode of ["missing", "garbage"] as const) {
      served.answer.mode = mode;
      const dataDir = join(work, `data-${mode}`);
      const server = await start(dataDir);
      try {
        expect(await eventually(async () => (await health(server)) === "unavailable", 30_000)).toBe(true);
        // Keyword search still answers.
        const agent = await server.agent("offline");
        const found = await server.request("/memory/search?q=anything", { as: agent });
        expect(found.headers.get("x-search-mode")).toBe("keyword");
      } finally {
        await server.close();
      }
      expect(readdirSync(join(dataDir, "models"))).toEqual([]);
    }
    expect(served.requests.filter((path) => path === `/${NAME}.tar.gz`).length).toBeGreaterThanOrEqual(2);
  });

  it("downloads and unpacks the model into DATA_DIR/models on first use, then embeds and searches with it", async () => {
    served.answer.mode = "archive";
    const dataDir = join(work, "data-ok");
    const server = await start(dataDir);
    try {
      expect(await eventually(async () => (await health(server)) === "ready", 60_000)).toBe(true);
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
    expect(readdirSync(join(dataDir, "models"))).toEqual([NAME]);
    expect(existsSync(join(dataDir, "models", NAME, "model_optimized.onnx"))).toBe(true);
  });
});
