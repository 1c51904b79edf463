import { createHash } from "node:crypto";
import { createReadStream, existsSync } from "node:fs";
import { join } from "node:path";
import { DEFAULT_MODEL_BASE_URL, type Config } from "../core/config.js";
import { bundledModelDir } from "../core/paths.js";
import type { Embedder, EmbedderLoader } from "./embedder.js";
import { loadOnnxEmbedder } from "./onnx.js";
import { hashEmbedder } from "./hash.js";

const LOCAL_LOAD_TIMEOUT_MS = 120_000;
const DOWNLOAD_LOAD_TIMEOUT_MS = 900_000;

/**
 * The id the bundled model's vectors are stored under. It names the weights, not the setting
 * (`EMBEDDING_MODEL=use-lite`): the int8 model's vectors differ from the fp32 one's it replaced
 * (stored as `use-lite`), so a store holding those is re-embedded on start.
 */
export const BUNDLED_MODEL_ID = "use-lite-int8";

async function fileDigest(path: string): Promise<string> {
  const hash = createHash("sha256");
  for await (const chunk of createReadStream(path)) hash.update(chunk as Buffer);
  return hash.digest("hex");
}

/**
 * Per model, the cosine at which a search hit's semantic half starts to count (0 there, 1 for the
 * same text); below it the vectors say nothing, however near the neighbour. Scores are only
 * comparable within one model, so each has its own. `use-lite` was chosen on the retrieval
 * benchmark (`npm run bench -- retrieval`: recall is flat from 0.2 to 0.45 and 0.3 keeps the
 * most paraphrases; the paraphrase benchmark's floor sweep still picks it for the int8 model),
 * `hash` with `npm run bench -- paraphrase`; `bge-small-en-v1.5` and `custom`
 * were not measured. Whether a hit is shown is then decided on the fused score (SEARCH_MIN_SCORE).
 */
export const SEARCH_FLOORS: Readonly<Record<Config["EMBEDDING_MODEL"], number>> = {
  "use-lite": 0.3,
  hash: 0.4,
  "bge-small-en-v1.5": 0.45,
  custom: 0.25,
};

/** `SEARCH_MIN_SIMILARITY` when set, else the configured model's default. */
export const searchFloorFor = (config: Pick<Config, "EMBEDDING_MODEL" | "SEARCH_MIN_SIMILARITY">): number =>
  config.SEARCH_MIN_SIMILARITY ?? SEARCH_FLOORS[config.EMBEDDING_MODEL];

/** Chooses the loader for `EMBEDDING_MODEL`. */
export function embedderLoaderFor(
  config: Pick<Config, "EMBEDDING_MODEL" | "EMBEDDING_MODEL_DIR" | "DATA_DIR"> & Partial<Pick<Config, "EMBEDDING_MODEL_URL" | "OUTBOUND_ALLOWLIST">>,
): EmbedderLoader {
  switch (config.EMBEDDING_MODEL) {
    case "hash":
      return () => Promise.resolve(hashEmbedder());
    case "use-lite":
      return () =>
        loadOnnxEmbedder(BUNDLED_MODEL_ID, { kind: "custom", dir: bundledModelDir, modelFile: "model-int8.onnx" }, LOCAL_LOAD_TIMEOUT_MS);
    case "custom":
      return async () => {
        const dir = config.EMBEDDING_MODEL_DIR ?? "";
        const file = join(dir, "model.onnx");
        if (!existsSync(file)) throw new Error(`no model.onnx in EMBEDDING_MODEL_DIR (${dir})`);
        // The id follows the weights, so replacing the model triggers re-embedding.
        const id = `custom-${(await fileDigest(file)).slice(0, 12)}`;
        return loadOnnxEmbedder(id, { kind: "custom", dir, modelFile: "model.onnx" }, LOCAL_LOAD_TIMEOUT_MS);
      };
    case "bge-small-en-v1.5":
      // Downloaded into DATA_DIR/models on first use; a failed download leaves nothing to trust.
      return () =>
        loadOnnxEmbedder(
          "bge-small-en-v1.5",
          {
            kind: "named",
            model: "bge-small-en-v1.5",
            cacheDir: join(config.DATA_DIR, "models"),
            baseUrl: config.EMBEDDING_MODEL_URL ?? DEFAULT_MODEL_BASE_URL,
            allowlist: config.OUTBOUND_ALLOWLIST ?? [],
          },
          DOWNLOAD_LOAD_TIMEOUT_MS,
        );
  }
}

/**
 * Starts `loader` now and hands its load to the first call; later calls (the queue's retries after
 * a failure or a crash) load afresh. A server starts the model first, so the embedding thread
 * loads it while the main thread loads the rest of the server and opens the store.
 */
export function loadingNow(loader: EmbedderLoader): EmbedderLoader {
  let started: Promise<Embedder> | null = loader();
  // Whoever calls first hears of a failure; until then it is not unhandled.
  started.catch(() => undefined);
  return () => {
    const load = started ?? loader();
    started = null;
    return load;
  };
}
