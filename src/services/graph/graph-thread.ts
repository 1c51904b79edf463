import { SerialWorker } from "../../core/worker-thread.js";
import { AppError, InternalError } from "../../core/errors.js";
import { srcModule } from "../../core/paths.js";
import type { StoreSource } from "../../store/open.js";
import type { GraphJob, GraphJobResult, WorkerReply, WorkerRequest } from "./graph-worker.js";

// The server's side of the graph worker (graph-worker.ts): one thread per process, shared by every
// server in it, running one job at a time in the order asked. The queue is capped: past
// MAX_WAITING_GRAPH_JOBS waiting jobs a request is refused with 503 and Retry-After rather than
// left to wait behind minutes of ranking. A job that takes longer than GRAPH_JOB_TIMEOUT_MS ends
// the thread (a new one starts for the next job), so one stuck read cannot hold every later one.

export const MAX_WAITING_GRAPH_JOBS = 16;
const GRAPH_JOB_TIMEOUT_MS = 120_000;
const RETRY_AFTER_SECONDS = 5;

class GraphThread {
  private readonly thread = new SerialWorker<Omit<WorkerRequest, "id">, WorkerReply>({
    entry: srcModule("services/graph/graph-worker.js"),
    timeoutMs: GRAPH_JOB_TIMEOUT_MS,
    timedOut: () => new InternalError("invariant", `a knowledge graph job did not finish within ${GRAPH_JOB_TIMEOUT_MS} ms`),
    exited: (code) => new InternalError("invariant", `the knowledge graph worker exited with code ${code}`),
  });

  /** Runs a job on the worker once those before it are done; refused (503) when too many wait. */
  async run<K extends GraphJob["kind"]>(source: StoreSource, job: Extract<GraphJob, { kind: K }>): Promise<GraphJobResult[K]> {
    if (job.kind !== "release" && this.thread.backlog >= MAX_WAITING_GRAPH_JOBS) {
      throw new AppError("UNAVAILABLE", "the knowledge graph is busy ranking other selections; try again shortly", { retryAfter: RETRY_AFTER_SECONDS });
    }
    const reply = await this.thread.run({ source, job });
    if (!reply.ok) throw new InternalError("invariant", `knowledge graph job failed: ${reply.message}`);
    return reply.result as GraphJobResult[K];
  }

  /** Lets the worker close what it opened for `source` (a server closing); nothing to do if it never started. */
  async release(source: StoreSource): Promise<void> {
    if (this.thread.idle) return;
    await this.run(source, { kind: "release" });
  }

  /** Jobs finished since the process started (for tests: the work went through the worker). */
  get finished(): number {
    return this.thread.finished;
  }

  /** Jobs waiting for the worker, the running one not counted. */
  get backlog(): number {
    return this.thread.backlog;
  }

  /** Whether a job is running on the worker now. */
  get active(): boolean {
    return this.thread.active;
  }
}

/** The process's one graph thread. */
export const graphThread = new GraphThread();
