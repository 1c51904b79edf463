import { existsSync } from "node:fs";
import { join } from "node:path";
import { pathToFileURL } from "node:url";
import { Worker } from "node:worker_threads";
import { packageRoot } from "../core/paths.js";
import type { Embedder } from "./embedder.js";
import type { WorkerReply, WorkerSource } from "./fastembed-worker.js";

interface Pending {
  resolve: (vectors: Float32Array[]) => void;
  reject: (error: Error) => void;
}

/**
 * The worker runs compiled JavaScript. When this module itself runs from TypeScript sources (the
 * test suite), that is the build's copy: worker threads cannot load .ts files.
 */
function workerUrl(): URL {
  if (!import.meta.url.endsWith(".ts")) return new URL("./fastembed-worker.js", import.meta.url);
  const built = join(packageRoot, "dist", "src", "embed", "fastembed-worker.js");
  if (!existsSync(built)) throw new Error("the embedding worker is not built; run `npm run build`");
  return pathToFileURL(built);
}

function startWorker(source: WorkerSource): Worker {
  return new Worker(workerUrl(), { workerData: source, execArgv: [] });
}

/** Starts a worker thread that loads the model; resolves once it has embedded a probe sentence. */
export function loadFastembed(id: string, source: WorkerSource, timeoutMs: number): Promise<Embedder> {
  return new Promise((resolve, reject) => {
    const worker = startWorker(source);
    const pending = new Map<number, Pending>();
    let nextId = 1;
    let ready = false;
    let dead: Error | null = null;
    const fail = (error: Error): void => {
      dead ??= error;
      for (const request of pending.values()) request.reject(error);
      pending.clear();
      if (!ready) reject(error);
    };
    const timer = setTimeout(() => {
      fail(new Error(`model ${id} did not load within ${timeoutMs} ms`));
      void worker.terminate();
    }, timeoutMs);
    worker.on("error", (error) => fail(error));
    worker.on("exit", (code) => fail(new Error(`embedding worker exited with code ${code}`)));
    worker.on("message", (reply: WorkerReply) => {
      switch (reply.type) {
        case "ready":
          ready = true;
          clearTimeout(timer);
          resolve({
            id,
            dimensions: reply.dimensions,
            embed: (texts) =>
              new Promise((resolveEmbed, rejectEmbed) => {
                if (dead) {
                  rejectEmbed(dead);
                  return;
                }
                const requestId = nextId++;
                pending.set(requestId, { resolve: resolveEmbed, reject: rejectEmbed });
                worker.postMessage({ id: requestId, texts });
              }),
            close: async () => {
              clearTimeout(timer);
              await worker.terminate();
            },
          });
          return;
        case "failed":
          clearTimeout(timer);
          fail(new Error(reply.message));
          void worker.terminate();
          return;
        case "vectors":
        case "error": {
          const request = pending.get(reply.id);
          pending.delete(reply.id);
          if (reply.type === "vectors") request?.resolve(reply.vectors);
          else request?.reject(new Error(reply.message));
          return;
        }
      }
    });
  });
}
