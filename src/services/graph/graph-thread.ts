import type { Worker } from "node:worker_threads";
import { startWorker } from "../../core/worker-thread.js";
import { AppError, InternalError } from "../../core/errors.js";
import type { StoreSource } from "../../store/open.js";
import type { GraphJob, GraphJobResult, WorkerReply, WorkerRequest } from "./graph-worker.js";

// The server's side of the graph worker (graph-worker.ts): one thread per process, shared by every
// server in it, running one job at a time in the order asked. The queue is capped: past
// MAX_WAITING_GRAPH_JOBS waiting jobs a request is refused with 503 and Retry-After rather than
// left to wait behind minutes of ranking. A job that takes longer than GRAPH_JOB_TIMEOUT_MS ends
// the thread (a new one starts for the next job), so one stuck read cannot hold every later one.

export const MAX_WAITING_GRAPH_JOBS = 16;
export const GRAPH_JOB_TIMEOUT_MS = 120_000;
const RETRY_AFTER_SECONDS = 5;

interface Queued {
  source: StoreSource;
  job: GraphJob;
  resolve: (result: unknown) => void;
  reject: (error: Error) => void;
}

export class GraphThread {
  private worker: Worker | null = null;
  private readonly waiting: Queued[] = [];
  private running: (Queued & { id: number; timer: NodeJS.Timeout }) | null = null;
  private nextId = 1;
  private done = 0;

  /** Runs a job on the worker once those before it are done; refused (503) when too many wait. */
  run<K extends GraphJob["kind"]>(source: StoreSource, job: Extract<GraphJob, { kind: K }>): Promise<GraphJobResult[K]> {
    if (job.kind !== "release" && this.waiting.length >= MAX_WAITING_GRAPH_JOBS) {
      return Promise.reject(new AppError("UNAVAILABLE", "the knowledge graph is busy ranking other selections; try again shortly", { retryAfter: RETRY_AFTER_SECONDS }));
    }
    return new Promise<GraphJobResult[K]>((resolve, reject) => {
      this.waiting.push({ source, job, resolve: resolve as (result: unknown) => void, reject });
      this.next();
    });
  }

  /** Lets the worker close what it opened for `source` (a server closing); nothing to do if it never started. */
  async release(source: StoreSource): Promise<void> {
    if (this.worker === null && this.running === null && this.waiting.length === 0) return;
    await this.run(source, { kind: "release" });
  }

  /** Jobs finished since the process started (for tests: the work went through the worker). */
  get finished(): number {
    return this.done;
  }

  /** Jobs waiting for the worker, the running one not counted. */
  get backlog(): number {
    return this.waiting.length;
  }

  /** Whether a job is running on the worker now. */
  get active(): boolean {
    return this.running !== null;
  }

  private next(): void {
    if (this.running !== null) return;
    const queued = this.waiting.shift();
    if (!queued) {
      this.worker?.unref();
      return;
    }
    const worker = this.ensureWorker();
    const id = this.nextId++;
    const timer = setTimeout(() => {
      this.fail(new InternalError("invariant", `a knowledge graph job did not finish within ${GRAPH_JOB_TIMEOUT_MS} ms`));
    }, GRAPH_JOB_TIMEOUT_MS);
    timer.unref();
    this.running = { ...queued, id, timer };
    worker.ref();
    worker.postMessage({ id, source: queued.source, job: queued.job } satisfies WorkerRequest);
  }

  private ensureWorker(): Worker {
    if (this.worker) return this.worker;
    const worker = startWorker(new URL("./graph-worker.js", import.meta.url));
    worker.on("message", (reply: WorkerReply) => {
      const running = this.running;
      if (!running || running.id !== reply.id) return;
      clearTimeout(running.timer);
      this.running = null;
      this.done += 1;
      if (reply.ok) running.resolve(reply.result);
      else running.reject(new InternalError("invariant", `knowledge graph job failed: ${reply.message}`));
      this.next();
    });
    worker.on("error", (error) => this.fail(error));
    worker.on("exit", (code) => {
      if (this.worker === worker) this.fail(new InternalError("invariant", `the knowledge graph worker exited with code ${code}`));
    });
    this.worker = worker;
    return worker;
  }

  /** The running job fails and the thread goes; the jobs waiting start on a new one. */
  private fail(error: Error): void {
    const worker = this.worker;
    this.worker = null;
    const running = this.running;
    this.running = null;
    if (running) {
      clearTimeout(running.timer);
      running.reject(error);
    }
    if (worker) void worker.terminate();
    this.next();
  }
}

/** The process's one graph thread. */
export const graphThread = new GraphThread();
