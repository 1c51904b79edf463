import { setTimeout as sleep } from "node:timers/promises";
import type { Logger } from "../core/log.js";
import { retry, type Backoff } from "../core/retry.js";
import type { Embedder, EmbedderLoader } from "./embedder.js";

export type EmbeddingStatus = "loading" | "ready" | "unavailable";

interface Job {
  text: string;
  resolve: (vector: Float32Array) => void;
  reject: (error: Error) => void;
}

export class EmbeddingsUnavailableError extends Error {
  constructor() {
    super("embeddings are unavailable");
    this.name = "EmbeddingsUnavailableError";
  }
}

/** Between tries at loading the model, and after it crashed before loading it again. */
const RELOAD: Backoff = { baseMs: 15_000, capMs: 600_000 };

/**
 * Owns the embedder's lifecycle (load in the background, retry with backoff after a failure) and
 * batches concurrent requests: while one batch is being embedded, new texts queue up and go
 * together in the next, so throughput grows with load without adding latency when idle.
 */
export class EmbeddingQueue {
  private embedder: Embedder | null = null;
  private state: EmbeddingStatus = "loading";
  private jobs: Job[] = [];
  private busy = false;
  private closed = false;
  private readonly closing = new AbortController();
  private settledWaiters: (() => void)[] = [];
  private batches = 0;
  private embedded = 0;
  private readyListeners: ((embedder: Embedder) => void)[] = [];

  constructor(
    private readonly loader: EmbedderLoader,
    private readonly log: Logger,
    private readonly batchSize = 32,
  ) {}

  get status(): EmbeddingStatus {
    return this.state;
  }

  /** Batches sent to the model and texts embedded so far (texts / batches = the batching gain). */
  get stats(): { batches: number; texts: number } {
    return { batches: this.batches, texts: this.embedded };
  }

  get model(): { id: string; dimensions: number } | null {
    return this.embedder ? { id: this.embedder.id, dimensions: this.embedder.dimensions } : null;
  }

  /** Starts loading without waiting for it: the model never sits on a request's path. */
  start(): void {
    void this.load();
  }

  onReady(listener: (embedder: Embedder) => void): void {
    this.readyListeners.push(listener);
    if (this.embedder) listener(this.embedder);
  }

  /** Resolves once loading has finished either way, or after `timeoutMs`. */
  async settled(timeoutMs: number): Promise<EmbeddingStatus> {
    if (this.state !== "loading") return this.state;
    await new Promise<void>((resolve) => {
      const timer = setTimeout(resolve, timeoutMs);
      this.settledWaiters.push(() => {
        clearTimeout(timer);
        resolve();
      });
    });
    return this.state;
  }

  embed(text: string): Promise<Float32Array> {
    if (this.state !== "ready" || this.closed) return Promise.reject(new EmbeddingsUnavailableError());
    return new Promise((resolve, reject) => {
      this.jobs.push({ text, resolve, reject });
      if (!this.busy) queueMicrotask(() => this.pump());
    });
  }

  embedMany(texts: string[]): Promise<Float32Array[]> {
    return Promise.all(texts.map((text) => this.embed(text)));
  }

  async close(): Promise<void> {
    this.closed = true;
    this.closing.abort();
    for (const job of this.jobs.splice(0)) job.reject(new EmbeddingsUnavailableError());
    await this.embedder?.close();
    this.embedder = null;
  }

  private async load(): Promise<void> {
    const started = Date.now();
    try {
      const embedder = await retry(
        () => {
          this.state = "loading";
          return this.loader();
        },
        {
          ...RELOAD,
          attempts: Infinity,
          signal: this.closing.signal,
          // A wait for the next try must not keep a process alive that has nothing else to do.
          sleep: (ms, signal) => sleep(ms, undefined, { signal, ref: false }),
          onRetry: (error, delayMs) => {
            this.state = "unavailable";
            this.log.warn("embedding model unavailable; writes are stored and embedded later", {
              error: error instanceof Error ? error.message : String(error),
              retry_in_ms: delayMs,
            });
            this.settle();
          },
        },
      );
      if (this.closed) {
        await embedder.close();
        return;
      }
      this.embedder = embedder;
      this.state = "ready";
      this.log.info("embedding model ready", { model: embedder.id, dimensions: embedder.dimensions, ms: Date.now() - started });
      for (const listener of this.readyListeners) listener(embedder);
    } catch (error) {
      // Only closing ends the retries, so anything else here was thrown by a ready listener.
      if (!this.closed) this.log.error("a listener failed on the embedding model's load", { error: error instanceof Error ? error.message : String(error) });
    } finally {
      this.settle();
    }
  }

  /** After a crash: a pause first, so a model that crashes on every batch is not reloaded in a tight loop. */
  private async reload(): Promise<void> {
    try {
      await sleep(RELOAD.baseMs, undefined, { signal: this.closing.signal, ref: false });
    } catch {
      return;
    }
    await this.load();
  }

  private settle(): void {
    for (const waiter of this.settledWaiters.splice(0)) waiter();
  }

  private pump(): void {
    const embedder = this.embedder;
    if (this.busy || this.jobs.length === 0 || !embedder) return;
    const batch = this.jobs.splice(0, this.batchSize);
    this.busy = true;
    this.batches++;
    this.embedded += batch.length;
    embedder.embed(batch.map((job) => job.text)).then(
      (vectors) => {
        batch.forEach((job, index) => {
          const vector = vectors[index];
          if (vector) job.resolve(vector);
          else job.reject(new Error("embedder returned too few vectors"));
        });
      },
      (error: unknown) => {
        for (const job of batch) job.reject(new EmbeddingsUnavailableError());
        this.log.error("embedding failed; reloading the model", { error: error instanceof Error ? error.message : String(error) });
        this.embedder = null;
        this.state = "unavailable";
        void embedder.close();
        for (const job of this.jobs.splice(0)) job.reject(new EmbeddingsUnavailableError());
        void this.reload();
      },
    ).finally(() => {
      this.busy = false;
      this.pump();
    });
  }
}
