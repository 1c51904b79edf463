import { existsSync } from "node:fs";
import { fileURLToPath } from "node:url";
import { Worker } from "node:worker_threads";

/**
 * Loads TypeScript in a worker thread, which cannot load .ts files itself. A development
 * dependency: only runs from the TypeScript sources (the test suite, the benchmarks' tooling) use
 * it, so it is named here and never imported by the built server.
 */
const TYPESCRIPT_LOADER = "tsx/esm/api";

/**
 * Starts the worker module at `entry` (its `.js` URL, as `srcModule` chose it). A build's copy
 * exists; a source has only its `.ts`, which is loaded through the TypeScript loader those runs
 * have (`srcModule` names a source only when the build is older than it).
 */
function startWorker(entry: URL): Worker {
  if (existsSync(fileURLToPath(entry))) return new Worker(entry, { execArgv: [] });
  const source = JSON.stringify(entry.href.replace(/\.js$/, ".ts"));
  const loader = `import(${JSON.stringify(TYPESCRIPT_LOADER)}).then(({ tsImport }) => tsImport(${source}, ${JSON.stringify(entry.href)}));`;
  return new Worker(loader, { eval: true, execArgv: [] });
}

export interface SerialWorkerOptions {
  /** The worker module's `.js` URL (see startWorker). */
  entry: URL;
  /** A job running longer than this ends the thread; a new one starts for the next job. */
  timeoutMs: number;
  /** What a job that ran out of time fails with. */
  timedOut: () => Error;
  /** What the running job fails with when the thread exits under it. */
  exited: (code: number) => Error;
}

interface SerialJob<Payload, Reply> {
  payload: Payload;
  resolve: (reply: Reply) => void;
  reject: (error: Error) => void;
}

/**
 * One worker thread running one job at a time in the order asked: a message `{id, ...payload}` in,
 * a reply carrying the same `id` out. The thread starts with the first job and lets the process
 * exit while it has none; a job that fails the thread (its time up, an error, an exit) fails alone,
 * and the jobs waiting start on a new thread.
 */
export class SerialWorker<Payload extends object, Reply extends { id: number }> {
  private worker: Worker | null = null;
  private readonly waiting: SerialJob<Payload, Reply>[] = [];
  private running: (SerialJob<Payload, Reply> & { id: number; timer: NodeJS.Timeout }) | null = null;
  private nextId = 1;
  private done = 0;

  constructor(private readonly options: SerialWorkerOptions) {}

  /** The worker's reply to `payload`, once the jobs before it are done. */
  run(payload: Payload): Promise<Reply> {
    return new Promise((resolve, reject) => {
      this.waiting.push({ payload, resolve, reject });
      this.next();
    });
  }

  /** Jobs waiting, the running one not counted. */
  get backlog(): number {
    return this.waiting.length;
  }

  /** Whether a job is running now. */
  get active(): boolean {
    return this.running !== null;
  }

  /** Jobs finished since the process started. */
  get finished(): number {
    return this.done;
  }

  /** No thread, nothing running or waiting. */
  get idle(): boolean {
    return this.worker === null && this.running === null && this.waiting.length === 0;
  }

  /** Fails every job, waiting or running, with `error`, and ends the thread. */
  async stop(error: Error): Promise<void> {
    for (const job of this.waiting.splice(0)) job.reject(error);
    const worker = this.worker;
    this.fail(error);
    await worker?.terminate();
  }

  private next(): void {
    if (this.running !== null) return;
    const job = this.waiting.shift();
    if (!job) {
      this.worker?.unref();
      return;
    }
    const worker = this.ensureWorker();
    const id = this.nextId++;
    const timer = setTimeout(() => this.fail(this.options.timedOut()), this.options.timeoutMs);
    timer.unref();
    this.running = { ...job, id, timer };
    worker.ref();
    worker.postMessage({ id, ...job.payload });
  }

  private ensureWorker(): Worker {
    if (this.worker) return this.worker;
    const worker = startWorker(this.options.entry);
    worker.on("message", (reply: Reply) => {
      const running = this.running;
      if (!running || running.id !== reply.id) return;
      clearTimeout(running.timer);
      this.running = null;
      this.done += 1;
      running.resolve(reply);
      this.next();
    });
    worker.on("error", (error) => this.fail(error));
    worker.on("exit", (code) => {
      if (this.worker === worker) this.fail(this.options.exited(code));
    });
    this.worker = worker;
    return worker;
  }

  /** The running job fails and the thread goes; those waiting start on a new one. */
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
