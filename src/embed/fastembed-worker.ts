// Runs a fastembed model off the main thread: ONNX inference would otherwise block the event loop
// for a couple of milliseconds per sentence.
import { parentPort, workerData } from "node:worker_threads";
import { EmbeddingModel, FlagEmbedding } from "fastembed";

export type WorkerSource =
  | { kind: "custom"; dir: string; modelFile: string }
  | { kind: "named"; model: "bge-small-en-v1.5"; cacheDir: string };

export type WorkerRequest = { id: number; texts: string[] };
export type WorkerReply =
  | { type: "ready"; dimensions: number }
  | { type: "failed"; message: string }
  | { type: "vectors"; id: number; vectors: Float32Array[] }
  | { type: "error"; id: number; message: string };

const port = parentPort;
if (!port) throw new Error("fastembed-worker must run as a worker thread");
const source = workerData as WorkerSource;

async function load(): Promise<FlagEmbedding> {
  if (source.kind === "custom") {
    return FlagEmbedding.init({
      model: EmbeddingModel.CUSTOM,
      modelAbsoluteDirPath: source.dir,
      modelName: source.modelFile,
      showDownloadProgress: false,
    });
  }
  return FlagEmbedding.init({
    model: EmbeddingModel.BGESmallENV15,
    cacheDir: source.cacheDir,
    showDownloadProgress: false,
  });
}

async function embedAll(model: FlagEmbedding, texts: string[]): Promise<Float32Array[]> {
  const vectors: Float32Array[] = [];
  for await (const batch of model.embed(texts, 64)) {
    for (const vector of batch) vectors.push(Float32Array.from(vector));
  }
  return vectors;
}

const errorText = (error: unknown): string => (error instanceof Error ? error.message : String(error));

try {
  const model = await load();
  const [probe] = await embedAll(model, ["dimension probe"]);
  port.postMessage({ type: "ready", dimensions: probe?.length ?? 0 } satisfies WorkerReply);
  port.on("message", (request: WorkerRequest) => {
    embedAll(model, request.texts).then(
      (vectors) => {
        const reply: WorkerReply = { type: "vectors", id: request.id, vectors };
        port.postMessage(reply, vectors.map((vector) => vector.buffer as ArrayBuffer));
      },
      (error: unknown) => port.postMessage({ type: "error", id: request.id, message: errorText(error) } satisfies WorkerReply),
    );
  });
} catch (error) {
  port.postMessage({ type: "failed", message: errorText(error) } satisfies WorkerReply);
}
