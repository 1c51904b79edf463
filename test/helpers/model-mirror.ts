import { copyFileSync, mkdirSync, readFileSync } from "node:fs";
import { createServer, type Server } from "node:http";
import { join, resolve } from "node:path";
import { create } from "tar";
import type { TestServer } from "./server.js";

const BUNDLED = resolve(import.meta.dirname, "../../models/universal-sentence-encoder-lite");

/** The archive's name on the mirror, and the folder it unpacks to. */
export const MODEL_NAME = "fast-bge-small-en-v1.5";

export interface ModelMirror {
  server: Server;
  url: string;
  requests: string[];
  answer: { mode: "archive" | "missing" | "garbage" };
}

/**
 * A mirror on loopback serving an archive laid out as the real one is (a folder of that name with
 * `model_optimized.onnx` and the tokenizer files), built under `work`. The weights are the bundled
 * model's: what is under test is fetching, unpacking and loading, not bge's numbers.
 */
export async function modelMirror(work: string): Promise<ModelMirror> {
  const folder = join(work, "source", MODEL_NAME);
  mkdirSync(folder, { recursive: true });
  copyFileSync(join(BUNDLED, "model-int8.onnx"), join(folder, "model_optimized.onnx"));
  for (const file of ["tokenizer.json", "config.json", "tokenizer_config.json", "special_tokens_map.json"]) copyFileSync(join(BUNDLED, file), join(folder, file));
  const archive = join(work, "archive.tar.gz");
  await create({ gzip: true, file: archive, cwd: join(work, "source") }, [MODEL_NAME]);

  const requests: string[] = [];
  const answer: ModelMirror["answer"] = { mode: "archive" };
  const server = createServer((request, response) => {
    requests.push(request.url ?? "");
    if (answer.mode === "missing" || request.url !== `/${MODEL_NAME}.tar.gz`) response.writeHead(404).end("not here");
    else if (answer.mode === "garbage") response.writeHead(200, { "content-type": "application/octet-stream" }).end(Buffer.alloc(4096, 7));
    else response.writeHead(200, { "content-type": "application/octet-stream" }).end(readFileSync(archive));
  });
  return new Promise((resolveListen) =>
    server.listen(0, "127.0.0.1", () => resolveListen({ server, url: `http://127.0.0.1:${(server.address() as { port: number }).port}`, requests, answer })),
  );
}

/** What /health says of the embedding model. */
export const embeddingsHealth = async (server: TestServer): Promise<string> => (await server.request<{ embeddings: string }>("/health")).body.embeddings;
