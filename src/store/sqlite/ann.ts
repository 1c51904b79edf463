import type { Worker } from "node:worker_threads";
import { srcModule } from "../../core/paths.js";
import { startWorker } from "../../core/worker-thread.js";
import type { AnnMessage, AnnReply, AnnRequest } from "./ann-worker.js";
import type { Db } from "./connection.js";

/** How the HNSW index beside a SQLite store is built and used (docs/architecture.md, "Search at scale"). */
export interface AnnSettings {
  /** Below this many embeddings no index is built or used: the exact scan is cheap enough. */
  threshold: number;
  /** hnswlib's M and ef_construction. */
  m: number;
  efConstruction: number;
  /** hnswlib's ef at query time (raised to the number of neighbours asked when that is more). */
  ef: number;
  /** Changes applied after the last save that make the index be saved (and the log pruned) again. */
  saveEvery: number;
}

export const ANN_DEFAULTS: AnnSettings = { threshold: 20_000, m: 16, efConstruction: 200, ef: 200, saveEvery: 20_000 };

/** How often a store below the threshold counts its vectors again. */
const RECOUNT_MS = 5_000;
/** A failed build or load is not tried again before this. */
const RETRY_MS = 60_000;
/** Building the index of 1,000,000 entries takes tens of minutes of one core; past this it is given up. */
const OPEN_TIMEOUT_MS = 3 * 60 * 60_000;

export type AnnStatus = "off" | "building" | "ready";

type Asked = Exclude<AnnRequest, { type: "changed" }> extends infer R ? (R extends { id: number } ? Omit<R, "id"> : never) : never;

const workerEntry = srcModule("store/sqlite/ann-worker.js");

/**
 * The HNSW index of a SQLite store as this process's searches see it: a candidate generator only
 * (vectors.ts checks every candidate against the query's filters in SQL and ranks by exact
 * cosine). The index itself lives in a worker thread (ann-worker.ts, ann-live.ts), which builds or
 * loads it, follows the store's commits and answers searches; this side decides when the store is
 * large enough to have one, tells the thread of this process's commits and prunes the change log
 * after the thread saves. Until the index is ready, and whenever it cannot answer, `candidates`
 * answers null and the caller scans.
 */
export class SqliteAnn {
  private worker: Worker | null = null;
  private readonly pending = new Map<number, (reply: AnnReply | null) => void>();
  private nextId = 1;
  private state: AnnStatus = "off";
  private opening: Promise<void> | null = null;
  private closed = false;
  private lastCount = -Infinity;
  private failedAt = -Infinity;

  constructor(
    private readonly file: string,
    /** A connection that sees only what is committed. */
    private readonly db: Db,
    private readonly settings: AnnSettings,
    /** Deletes the log through a seq, in a write transaction of the store. */
    private readonly prune: (through: number) => Promise<void>,
    private readonly onError: (error: unknown) => void,
  ) {}

  get status(): AnnStatus {
    return this.state;
  }

  /** Resolves once the index is ready and current (true) or cannot be now (false: below the threshold, failed, closed). */
  async ready(): Promise<boolean> {
    for (;;) {
      this.startWhenDue();
      while (this.opening) await this.opening;
      if (this.state !== "ready" || this.closed) return false;
      const reply = await this.ask({ type: "current" });
      if (reply?.type === "current") return true;
      if (reply?.type !== "stale") return false;
    }
  }

  /**
   * Labels (memory pks) of about the `n` nearest points, or null when the index cannot answer
   * now (not built, of another model, behind): the caller scans instead.
   */
  async candidates(vector: Float32Array, n: number): Promise<number[] | null> {
    if (this.closed) return null;
    if (this.state !== "ready") {
      this.startWhenDue();
      return null;
    }
    const reply = await this.ask({ type: "search", vector, n });
    if (reply?.type === "found") return reply.labels;
    if (reply?.type === "error") this.onError(new Error(`HNSW index: ${reply.message}`));
    return null;
  }

  /** A write of this process committed: the thread applies it in the background rather than in the next query. */
  changed(): void {
    if (this.state === "ready" && this.worker) this.worker.postMessage({ type: "changed" } satisfies AnnRequest);
  }

  async close(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    const worker = this.worker;
    if (!worker) return;
    if (this.state === "ready") {
      // The thread saves what its file does not hold yet (no pruning: that takes a transaction of a closing store).
      const reply = await this.ask({ type: "close" });
      if (reply?.type === "error") this.onError(new Error(`HNSW index: ${reply.message}`));
    }
    // A build under way is abandoned: it holds the thread until done, and a store closing waits for nothing.
    this.worker = null;
    for (const settle of this.pending.values()) settle(null);
    this.pending.clear();
    await worker.terminate();
  }

  /** The database's model, dimensions, layout and generation: an index of another is useless. */
  private currentIdentity(): string | null {
    const row = this.db.get<{ model: string | null; dimensions: string | null; layout: string | null; generation: string | null }>(
      `SELECT (SELECT value FROM meta WHERE key = 'vector_model') AS model, (SELECT value FROM meta WHERE key = 'vector_dimensions') AS dimensions,
       (SELECT value FROM meta WHERE key = 'vector_layout') AS layout, (SELECT value FROM meta WHERE key = 'vector_generation') AS generation`,
    );
    if (!row?.model || !row.dimensions || !row.layout) return null;
    return `${row.model}|${row.dimensions}|${row.layout}|${row.generation ?? ""}`;
  }

  /**
   * Opens the index in the thread when the store has reached the threshold. A store below it is
   * counted at most every few seconds, and a failure is not tried again for a minute, so a small
   * store's searches and writes read nothing for the index.
   */
  private startWhenDue(): void {
    const at = performance.now();
    if (this.closed || this.state !== "off" || at - this.failedAt < RETRY_MS || at - this.lastCount < RECOUNT_MS) return;
    const identity = this.currentIdentity();
    if (identity === null) return;
    this.lastCount = at;
    // vec0's rowid table: counting `memory_embeddings` reads every vector's page.
    const count = this.db.get<{ n: number }>("SELECT count(*) AS n FROM memory_vectors_rowids")?.n ?? 0;
    if (count < this.settings.threshold) return;
    this.state = "building";
    const { m, efConstruction, ef, saveEvery } = this.settings;
    this.opening = this.ask({ type: "open", settings: { file: this.file, identity, dimensions: Number(identity.split("|")[1]), m, efConstruction, ef, saveEvery } }, OPEN_TIMEOUT_MS)
      .then((reply) => {
        if (reply?.type !== "opened") throw new Error(reply?.type === "error" ? reply.message : "the HNSW index could not be opened");
        if (!this.closed) this.state = "ready";
      })
      .catch((error: unknown) => {
        this.failed(error);
      })
      .finally(() => {
        this.opening = null;
        this.lastCount = -Infinity;
      });
  }

  private failed(error: unknown): void {
    this.state = "off";
    this.failedAt = performance.now();
    if (!this.closed) this.onError(error);
  }

  /** Sends a request to the thread (started with the first); null when the thread failed or ended meanwhile. */
  private ask(request: Asked, timeoutMs = 0): Promise<AnnReply | null> {
    const worker = this.ensureWorker();
    const id = this.nextId++;
    return new Promise((resolve) => {
      const timer = timeoutMs > 0 ? setTimeout(() => this.lost(new Error("opening the HNSW index timed out")), timeoutMs) : null;
      timer?.unref();
      this.pending.set(id, (reply) => {
        if (timer) clearTimeout(timer);
        if (reply?.type === "stale") this.state = "off";
        resolve(reply);
      });
      // Kept alive while it owes an answer, so a process waiting only for the index does not exit.
      worker.ref();
      worker.postMessage({ id, ...request });
    });
  }

  private ensureWorker(): Worker {
    if (this.worker) return this.worker;
    const worker = startWorker(workerEntry);
    worker.on("message", (message: AnnMessage) => this.received(message));
    worker.on("error", (error) => this.lost(error));
    worker.on("exit", (code) => {
      if (this.worker === worker) this.lost(new Error(`the HNSW worker exited with code ${code}`));
    });
    worker.unref();
    this.worker = worker;
    return worker;
  }

  private received(message: AnnMessage): void {
    if ("id" in message) {
      const settle = this.pending.get(message.id);
      this.pending.delete(message.id);
      if (this.pending.size === 0) this.worker?.unref();
      settle?.(message);
      return;
    }
    if (message.type === "saved") {
      if (!this.closed) void this.prune(message.seq).catch(this.onError);
      return;
    }
    if (message.dropped) {
      this.state = "off";
      // Stale (another process pruned past it): opened again at once; a failure waits.
      if (message.message !== null) this.failedAt = performance.now();
    }
    if (message.message !== null && !this.closed) this.onError(new Error(`HNSW index: ${message.message}`));
  }

  /** The thread is gone: every answer it owed is null, the index is off until the next try. */
  private lost(error: Error): void {
    const worker = this.worker;
    this.worker = null;
    for (const settle of this.pending.values()) settle(null);
    this.pending.clear();
    if (worker) void worker.terminate();
    this.failed(error);
  }
}
