// Runs the embedding models off the main thread: inference would otherwise block the event loop
// for milliseconds per sentence. One such thread serves every model of the process.
//
// onnxruntime-node is pinned to 1.16.3, the last release without an install script: later ones
// download CUDA libraries from GitHub when installed, which fails offline and cannot be turned off
// by a package that depends on them (only by the installing user's npm settings).
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { parentPort } from "node:worker_threads";
import { AddedToken, Tokenizer } from "@anush008/tokenizers";
import * as ort from "onnxruntime-node";
import { fileContains } from "../core/file-contains.js";
import type { NamedModel } from "./model-download.js";

// One thread: this worker is the embedding core; the main thread keeps its own for HTTP and SQLite.
const SESSION_OPTIONS = { graphOptimizationLevel: "all", intraOpNumThreads: 1, interOpNumThreads: 1 } as const;

export type WorkerSource =
  | { kind: "custom"; dir: string; modelFile: string }
  | { kind: "named"; model: NamedModel; cacheDir: string; baseUrl: string; allowlist: readonly string[] };

export type WorkerRequest =
  | { type: "load"; id: number; key: string; source: WorkerSource }
  | { type: "embed"; id: number; key: string; texts: string[] };

export type WorkerReply =
  | { type: "loaded"; id: number; dimensions: number }
  | { type: "vectors"; id: number; vectors: Float32Array[] }
  | { type: "error"; id: number; message: string };

const port = parentPort;
if (!port) throw new Error("onnx-worker must run as a worker thread");

// Texts are embedded in batches of this many; each batch is padded to its longest text only.
const BATCH = 64;
const MAX_TOKENS = 512;

interface Model {
  tokenizer: Tokenizer;
  session: ort.InferenceSession;
  dimensions: number;
  /** Texts per run: 1 for a model that quantizes its activations as it runs (see `batchFor`). */
  batch: number;
}

/**
 * A model quantized dynamically (the bundled one) scales each run's activations by that run's
 * largest value, so a text embedded beside others would get a vector that depends, slightly, on
 * its neighbours (cosine ~0.999 to itself alone). Each text then runs alone, and the same text
 * always gets the same vector; alone it costs about what it costs in a batch, having no padding.
 * The file is searched a slice at a time: the model's bytes held whole would stay in this thread,
 * which collects garbage rarely once idle (onnxruntime reads the file itself).
 */
function batchFor(modelFile: string): number {
  return fileContains(modelFile, Buffer.from("DynamicQuantizeLinear")) ? 1 : BATCH;
}

const readJson = (dir: string, file: string): Record<string, unknown> => JSON.parse(readFileSync(join(dir, file), "utf8")) as Record<string, unknown>;

/** A token as tokenizer files write it: the text, or an object holding it as `content`. */
const tokenText = (token: unknown): string | undefined =>
  typeof token === "string" ? token : token !== null && typeof token === "object" && "content" in token ? String(token.content) : undefined;

/** The tokenizer as the model's files describe it: truncation, padding token and special tokens. */
function loadTokenizer(dir: string): Tokenizer {
  const config = readJson(dir, "config.json");
  const tokenizerConfig = readJson(dir, "tokenizer_config.json");
  const specialTokens = readJson(dir, "special_tokens_map.json");
  const tokenizer = Tokenizer.fromFile(join(dir, "tokenizer.json"));
  tokenizer.setTruncation(Math.min(MAX_TOKENS, Number(tokenizerConfig.model_max_length ?? MAX_TOKENS)));
  tokenizer.setPadding({ padId: Number(config.pad_token_id ?? 0), padToken: tokenText(tokenizerConfig.pad_token) ?? "[PAD]" });
  for (const token of Object.values(specialTokens)) {
    if (typeof token === "string") tokenizer.addSpecialTokens([token]);
    else if (token !== null && typeof token === "object" && "content" in token) {
      const added = token as { content: string; single_word?: boolean; lstrip?: boolean; rstrip?: boolean; normalized?: boolean };
      const options = { singleWord: added.single_word, leftStrip: added.lstrip, rightStrip: added.rstrip, normalized: added.normalized };
      const given = Object.fromEntries(Object.entries(options).filter(([, value]) => value !== undefined));
      tokenizer.addAddedTokens([new AddedToken(added.content, true, given)]);
    }
  }
  return tokenizer;
}

const unit = (vector: Float32Array): Float32Array => {
  let norm = 0;
  for (const value of vector) norm += value * value;
  const scale = 1 / Math.max(Math.sqrt(norm), 1e-12);
  return vector.map((value) => value * scale);
};

/** A batch's vectors: the first position of `last_hidden_state`, at unit length. */
async function embedBatch(model: Model, texts: string[]): Promise<Float32Array[]> {
  const encodings = await model.tokenizer.encodeBatch(texts);
  const length = encodings[0]?.getIds().length ?? 0;
  type Encoding = (typeof encodings)[number];
  // Filled in place: spreading every id into intermediate arrays of BigInts cost the thread more
  // than the tokenizer did.
  const tensor = (column: (encoding: Encoding) => number[]): ort.Tensor => {
    const data = new BigInt64Array(texts.length * length);
    encodings.forEach((encoding, row) => {
      const values = column(encoding);
      for (let index = 0; index < values.length; index++) data[row * length + index] = BigInt(values[index] as number);
    });
    return new ort.Tensor("int64", data, [texts.length, length]);
  };
  const columns: Record<string, (encoding: Encoding) => number[]> = {
    input_ids: (encoding) => encoding.getIds(),
    attention_mask: (encoding) => encoding.getAttentionMask(),
    token_type_ids: (encoding) => encoding.getTypeIds(),
  };
  const feeds: Record<string, ort.Tensor> = {};
  for (const [name, column] of Object.entries(columns)) if (model.session.inputNames.includes(name)) feeds[name] = tensor(column);
  const output = (await model.session.run(feeds)).last_hidden_state;
  if (!output) throw new Error("the model has no last_hidden_state output");
  const [count = 0, positions = 0, width = 0] = output.dims;
  const data = output.data as Float32Array;
  return Array.from({ length: count }, (_, index) => unit(data.slice(index * positions * width, index * positions * width + width)));
}

async function embedAll(model: Model, texts: string[]): Promise<Float32Array[]> {
  const vectors: Float32Array[] = [];
  for (let start = 0; start < texts.length; start += model.batch) vectors.push(...(await embedBatch(model, texts.slice(start, start + model.batch))));
  return vectors;
}

async function init(source: WorkerSource): Promise<Model> {
  const { dir, modelFile } =
    source.kind === "custom"
      ? source
      : // Loaded only for a model fetched on first use: the bundled one needs neither tar nor the network.
        { dir: await (await import("./model-download.js")).downloadNamedModel(source.model, source.cacheDir, source.baseUrl, source.allowlist), modelFile: "model_optimized.onnx" };
  const tokenizer = loadTokenizer(dir);
  const path = join(dir, modelFile);
  const session = await ort.InferenceSession.create(path, SESSION_OPTIONS);
  const model = { tokenizer, session, dimensions: 0, batch: batchFor(path) };
  model.dimensions = (await embedBatch(model, ["dimension probe"]))[0]?.length ?? 0;
  return model;
}

const models = new Map<string, Promise<Model>>();

/** Loads a model once; a failed load is forgotten so a later request can try again. */
function load(key: string, source: WorkerSource): Promise<Model> {
  let loading = models.get(key);
  if (!loading) {
    loading = init(source);
    loading.catch(() => models.delete(key));
    models.set(key, loading);
  }
  return loading;
}

const errorText = (error: unknown): string => (error instanceof Error ? error.message : String(error));

async function handle(request: WorkerRequest): Promise<void> {
  try {
    if (request.type === "load") {
      const { dimensions } = await load(request.key, request.source);
      port?.postMessage({ type: "loaded", id: request.id, dimensions } satisfies WorkerReply);
      return;
    }
    const loaded = models.get(request.key);
    if (!loaded) throw new Error(`model ${request.key} is not loaded`);
    const vectors = await embedAll(await loaded, request.texts);
    const reply: WorkerReply = { type: "vectors", id: request.id, vectors };
    port?.postMessage(reply, vectors.map((vector) => vector.buffer as ArrayBuffer));
  } catch (error) {
    port?.postMessage({ type: "error", id: request.id, message: errorText(error) } satisfies WorkerReply);
  }
}

port.on("message", (request: WorkerRequest) => void handle(request));
