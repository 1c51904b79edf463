import { existsSync } from "node:fs";
import { fileURLToPath } from "node:url";
import { Worker } from "node:worker_threads";
import { settleBeforeExit } from "../core/exit.js";
import { builtModule } from "../core/paths.js";
import type { Embedder } from "./embedder.js";
import type { WorkerReply, WorkerRequest, WorkerSource } from "./onnx-worker.js";

type Request = WorkerRequest extends infer R ? (R extends WorkerRequest ? Omit<R, "id"> : never) : never;

/**
 * The worker runs compiled JavaScript. When this module itself runs from TypeScript sources (the
 * test suite), that is the build's copy: worker threads cannot load .ts files.
 */
function workerUrl(): URL {
  const url = builtModule("embed/onnx-worker.js");
  if (import.meta.url.endsWith(".ts") && !existsSync(fileURLToPath(url))) throw new Error("the embedding worker is not built; run `npm run build`");
  return url;
}

/**
 * One worker thread per process, shared by every model and never terminated: a model loaded once
 * serves every server of the process (the test suite runs many), and loading is the slow part.
 */
class EmbeddingThread {
  private readonly worker: Worker;
  private readonly pending = new Map<number, { resolve: (reply: WorkerReply) => void; reject: (error: Error) => void }>();
  private nextId = 1;
  private failure: Error | null = null;
  private idleWaiters: (() => void)[] = [];

  constructor() {
    this.worker = new Worker(workerUrl(), { execArgv: [] });
    // An idle thread must not keep a finished process (a CLI command, a test) alive; it is
    // referenced only while a call waits for it.
    this.worker.unref();
    this.worker.on("message", (reply: WorkerReply) => {
      const waiting = this.pending.get(reply.id);
      if (reply.type === "error") waiting?.reject(new Error(reply.message));
      else waiting?.resolve(reply);
    });
    const fail = (error: Error): void => {
      this.failure ??= error;
      for (const waiting of [...this.pending.values()]) waiting.reject(error);
    };
    this.worker.on("error", fail);
    this.worker.on("exit", (code) => fail(new Error(`embedding worker exited with code ${code}`)));
    settleBeforeExit(() => this.idle());
  }

  /** Resolves once no call waits for the thread (a load or an embedding under way). */
  idle(): Promise<void> {
    if (this.pending.size === 0) return Promise.resolve();
    return new Promise((resolve) => this.idleWaiters.push(resolve));
  }

  call(request: Request, timeoutMs: number): Promise<WorkerReply> {
    if (this.failure) return Promise.reject(this.failure);
    return new Promise((resolve, reject) => {
      const id = this.nextId++;
      const settle = (): void => {
        clearTimeout(timer);
        this.pending.delete(id);
        if (this.pending.size > 0) return;
        this.worker.unref();
        for (const resolve of this.idleWaiters.splice(0)) resolve();
      };
      const timer = setTimeout(() => {
        settle();
        reject(new Error(`embedding worker did not answer within ${timeoutMs} ms`));
      }, timeoutMs);
      this.pending.set(id, {
        resolve: (reply) => {
          settle();
          resolve(reply);
        },
        reject: (error) => {
          settle();
          reject(error);
        },
      });
      this.worker.ref();
      this.worker.postMessage({ ...request, id });
    });
  }
}

let thread: EmbeddingThread | null = null;

const EMBED_TIMEOUT_MS = 120_000;

/** Loads a model in the shared embedding thread; resolves once it has embedded a probe sentence. */
export async function loadOnnxEmbedder(id: string, source: WorkerSource, timeoutMs: number): Promise<Embedder> {
  thread ??= new EmbeddingThread();
  const shared = thread;
  // A downloaded model is the one in this server's own DATA_DIR/models: another server of the
  // process that downloaded the same model elsewhere must not stand in for a download that fails.
  const key = source.kind === "named" ? `${id}\u0000${source.cacheDir}` : id;
  const loaded = await shared.call({ type: "load", key, source }, timeoutMs);
  if (loaded.type !== "loaded") throw new Error("unexpected reply from the embedding worker");
  return {
    id,
    dimensions: loaded.dimensions,
    embed: async (texts) => {
      const reply = await shared.call({ type: "embed", key, texts }, EMBED_TIMEOUT_MS);
      if (reply.type !== "vectors") throw new Error("unexpected reply from the embedding worker");
      return reply.vectors;
    },
    // The model stays loaded in the shared thread, ready for the next server in this process.
    close: () => Promise.resolve(),
  };
}
