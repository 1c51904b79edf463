import { setTimeout as sleep } from "node:timers/promises";
import type { Logger } from "../core/log.js";
import { retry, type Backoff } from "../core/retry.js";
import type { Embedder, EmbedderLoader } from "./embedder.js";

export type EmbeddingStatus = "loading" | "ready" | "unavailable";

/**
 * Who waits for a text: a query (a search a user is waiting on), an interactive write (one entry,
 * its writer waiting for the answer), or bulk work nobody is waiting on (the backfill of a large
 * compile, an import, re-embedding after a model change). Earlier lanes are served first.
 */
const EMBEDDING_LANES = ["query", "write", "bulk"] as const;
export type EmbeddingLane = (typeof EMBEDDING_LANES)[number];

/**
 * Texts of bulk work per batch. A batch in progress is never interrupted, so this bounds how long
 * a query waits behind bulk work: 2 compiled descriptions are about 20 ms of use-lite on a small
 * machine, where a batch of 32 held a search for 360 ms. Small batches cost the bulk work nothing
 * measurable: with texts this long, use-lite's time per text is the same (about 10 ms) in batches
 * of 1 to 64. (`npm run bench -- backlog`: search p50 during a 2,000-unit backlog was 22 ms with
 * 1, 30 ms with 2, 43 ms with 4.)
 */
export const BULK_BATCH_SIZE = 2;

/**
 * Texts of writes per batch. A query arriving while a batch is embedded waits for that batch (it
 * cannot be interrupted): four writes' texts are about 7 ms of the int8 use-lite (each ~1.5–2 ms
 * of CPU; 20 ms with the fp32 model it replaced), a full batch of 32 over 50 ms. The bundled model
 * runs each text alone anyway (onnx-worker.ts, `batchFor`), so a batch saves only the messages
 * between the threads.
 */
export const WRITE_BATCH_SIZE = 4;

/**
 * Under a steady stream of queries and writes, bulk work still moves: after this many batches in a
 * row that passed over waiting bulk texts, the next batch is a bulk one.
 */
export const BULK_TURN_AFTER = 16;

interface Job {
  text: string;
  lane: EmbeddingLane;
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
 * together in the next, so throughput grows with load without adding latency when idle. Texts wait
 * in lanes by priority: a batch is filled from the query lane first, then the write lane (up to
 * WRITE_BATCH_SIZE texts in all), and takes bulk texts only when neither has any, and then at most
 * BULK_BATCH_SIZE of them, so a search issued behind thousands of writes or bulk texts waits for
 * one small batch, not for the backlog.
 */
export class EmbeddingQueue {
  private embedder: Embedder | null = null;
  private state: EmbeddingStatus = "loading";
  private readonly lanes: Record<EmbeddingLane, Job[]> = { query: [], write: [], bulk: [] };
  private busy = false;
  private closed = false;
  private readonly closing = new AbortController();
  private settledWaiters: (() => void)[] = [];
  private batches = 0;
  private embedded = 0;
  private readonly embeddedByLane: Record<EmbeddingLane, number> = { query: 0, write: 0, bulk: 0 };
  private busyMs = 0;
  private passedOverBulk = 0;
  private readyListeners: ((embedder: Embedder) => void)[] = [];

  constructor(
    private readonly loader: EmbedderLoader,
    private readonly log: Logger,
    private readonly batchSize = 32,
    private readonly bulkBatchSize = BULK_BATCH_SIZE,
    private readonly writeBatchSize = WRITE_BATCH_SIZE,
  ) {}

  get status(): EmbeddingStatus {
    return this.state;
  }

  /** Batches sent to the model and texts embedded so far (texts / batches = the batching gain), in all and by lane. */
  get stats(): { batches: number; texts: number; lanes: Record<EmbeddingLane, number> } {
    return { batches: this.batches, texts: this.embedded, lanes: { ...this.embeddedByLane } };
  }

  /** Texts waiting in each lane now. */
  get waiting(): Record<EmbeddingLane, number> {
    return { query: this.lanes.query.length, write: this.lanes.write.length, bulk: this.lanes.bulk.length };
  }

  /** The model's average time per text so far in this process; undefined before its first batch. */
  get msPerText(): number | undefined {
    return this.embedded === 0 ? undefined : this.busyMs / this.embedded;
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

  embed(text: string, lane: EmbeddingLane = "write"): Promise<Float32Array> {
    if (this.state !== "ready" || this.closed) return Promise.reject(new EmbeddingsUnavailableError());
    return new Promise((resolve, reject) => {
      this.lanes[lane].push({ text, lane, resolve, reject });
      if (!this.busy) queueMicrotask(() => this.pump());
    });
  }

  embedMany(texts: string[], lane: EmbeddingLane = "write"): Promise<Float32Array[]> {
    return Promise.all(texts.map((text) => this.embed(text, lane)));
  }

  async close(): Promise<void> {
    this.closed = true;
    this.closing.abort();
    this.rejectWaiting();
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

  private rejectWaiting(): void {
    for (const lane of EMBEDDING_LANES) for (const job of this.lanes[lane].splice(0)) job.reject(new EmbeddingsUnavailableError());
  }

  /** The next batch: queries up to the batch size, then writes up to the write batch size; bulk texts when there are neither (or it is their turn). */
  private nextBatch(): Job[] {
    const bulkWaits = this.lanes.bulk.length > 0;
    const batch: Job[] = [];
    if (!bulkWaits || this.passedOverBulk < BULK_TURN_AFTER) {
      batch.push(...this.lanes.query.splice(0, this.batchSize));
      batch.push(...this.lanes.write.splice(0, Math.max(0, Math.min(this.batchSize, this.writeBatchSize) - batch.length)));
    }
    if (batch.length > 0) {
      if (bulkWaits) this.passedOverBulk++;
    } else {
      batch.push(...this.lanes.bulk.splice(0, Math.min(this.bulkBatchSize, this.batchSize)));
      this.passedOverBulk = 0;
    }
    for (const job of batch) this.embeddedByLane[job.lane]++;
    return batch;
  }

  private pump(): void {
    const embedder = this.embedder;
    if (this.busy || !embedder) return;
    const batch = this.nextBatch();
    if (batch.length === 0) return;
    this.busy = true;
    this.batches++;
    this.embedded += batch.length;
    const started = performance.now();
    embedder.embed(batch.map((job) => job.text)).then(
      (vectors) => {
        this.busyMs += performance.now() - started;
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
        this.rejectWaiting();
        void this.reload();
      },
    ).finally(() => {
      this.busy = false;
      this.pump();
    });
  }
}
