// Runs fastembed models off the main thread: ONNX inference would otherwise block the event loop
// for a couple of milliseconds per sentence. One such thread serves every model of the process.
import { parentPort } from "node:worker_threads";
import { EmbeddingModel, FlagEmbedding } from "fastembed";
import { InferenceSession } from "onnxruntime-node";

// fastembed opens its sessions with onnxruntime's defaults: a pool of spinning threads, one per
// core, which on a small machine takes the main thread's core away from HTTP and SQLite for a few
// percent of speed. One thread here: this worker is the embedding core, the main thread keeps its own.
const createSession = InferenceSession.create.bind(InferenceSession) as (path: string, options?: InferenceSession.SessionOptions) => Promise<InferenceSession>;
(InferenceSession as unknown as { create: typeof createSession }).create = (path, options) =>
  createSession(path, { ...options, intraOpNumThreads: 1, interOpNumThreads: 1 });

export type WorkerSource =
  | { kind: "custom"; dir: string; modelFile: string }
  | { kind: "named"; model: "bge-small-en-v1.5"; cacheDir: string };

export type WorkerRequest =
  | { type: "load"; id: number; key: string; source: WorkerSource }
  | { type: "embed"; id: number; key: string; texts: string[] };

export type WorkerReply =
  | { type: "loaded"; id: number; dimensions: number }
  | { type: "vectors"; id: number; vectors: Float32Array[] }
  | { type: "error"; id: number; message: string };

const port = parentPort;
if (!port) throw new Error("fastembed-worker must run as a worker thread");

const models = new Map<string, Promise<{ model: FlagEmbedding; dimensions: number }>>();

function init(source: WorkerSource): Promise<FlagEmbedding> {
  if (source.kind === "custom") {
    return FlagEmbedding.init({
      model: EmbeddingModel.CUSTOM,
      modelAbsoluteDirPath: source.dir,
      modelName: source.modelFile,
      showDownloadProgress: false,
    });
  }
  return FlagEmbedding.init({ model: EmbeddingModel.BGESmallENV15, cacheDir: source.cacheDir, showDownloadProgress: false });
}

async function embedAll(model: FlagEmbedding, texts: string[]): Promise<Float32Array[]> {
  const vectors: Float32Array[] = [];
  for await (const batch of model.embed(texts, 64)) {
    for (const vector of batch) vectors.push(Float32Array.from(vector));
  }
  return vectors;
}

/** Loads a model once; a failed load is forgotten so a later request can try again. */
function load(key: string, source: WorkerSource): Promise<{ model: FlagEmbedding; dimensions: number }> {
  let loading = models.get(key);
  if (!loading) {
    loading = init(source).then(async (model) => ({ model, dimensions: (await embedAll(model, ["dimension probe"]))[0]?.length ?? 0 }));
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
    const vectors = await embedAll((await loaded).model, request.texts);
    const reply: WorkerReply = { type: "vectors", id: request.id, vectors };
    port?.postMessage(reply, vectors.map((vector) => vector.buffer as ArrayBuffer));
  } catch (error) {
    port?.postMessage({ type: "error", id: request.id, message: errorText(error) } satisfies WorkerReply);
  }
}

port.on("message", (request: WorkerRequest) => void handle(request));
