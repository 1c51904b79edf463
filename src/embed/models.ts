import { createHash } from "node:crypto";
import { createReadStream, existsSync, rmSync } from "node:fs";
import { join } from "node:path";
import type { Config } from "../core/config.js";
import { bundledModelDir } from "../core/paths.js";
import type { EmbedderLoader } from "./embedder.js";
import { loadFastembed } from "./fastembed.js";
import { hashEmbedder } from "./hash.js";

const LOCAL_LOAD_TIMEOUT_MS = 120_000;
const DOWNLOAD_LOAD_TIMEOUT_MS = 900_000;

async function fileDigest(path: string): Promise<string> {
  const hash = createHash("sha256");
  for await (const chunk of createReadStream(path)) hash.update(chunk as Buffer);
  return hash.digest("hex");
}

/** Chooses the loader for `EMBEDDING_MODEL`. */
export function embedderLoaderFor(config: Pick<Config, "EMBEDDING_MODEL" | "EMBEDDING_MODEL_DIR" | "DATA_DIR">): EmbedderLoader {
  switch (config.EMBEDDING_MODEL) {
    case "hash":
      return () => Promise.resolve(hashEmbedder());
    case "use-lite":
      return () =>
        loadFastembed("use-lite", { kind: "custom", dir: bundledModelDir, modelFile: "model.onnx" }, LOCAL_LOAD_TIMEOUT_MS);
    case "custom":
      return async () => {
        const dir = config.EMBEDDING_MODEL_DIR ?? "";
        const file = join(dir, "model.onnx");
        if (!existsSync(file)) throw new Error(`no model.onnx in EMBEDDING_MODEL_DIR (${dir})`);
        // The id follows the weights, so replacing the model triggers re-embedding.
        const id = `custom-${(await fileDigest(file)).slice(0, 12)}`;
        return loadFastembed(id, { kind: "custom", dir, modelFile: "model.onnx" }, LOCAL_LOAD_TIMEOUT_MS);
      };
    case "bge-small-en-v1.5":
      return async () => {
        const cacheDir = join(config.DATA_DIR, "models");
        try {
          return await loadFastembed("bge-small-en-v1.5", { kind: "named", model: "bge-small-en-v1.5", cacheDir }, DOWNLOAD_LOAD_TIMEOUT_MS);
        } catch (error) {
          // A failed or interrupted download leaves files fastembed would trust next time.
          rmSync(join(cacheDir, "fast-bge-small-en-v1.5.tar.gz"), { force: true });
          rmSync(join(cacheDir, "fast-bge-small-en-v1.5"), { recursive: true, force: true });
          throw error;
        }
      };
  }
}
