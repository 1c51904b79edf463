import type { Worker } from "node:worker_threads";
import { InternalError } from "../../core/errors.js";
import { startWorker } from "../../core/worker-thread.js";
import type { ReadyItem } from "./items.js";
import { FeedDocumentError } from "./parse.js";
import type { ParseReply, ParseRequest } from "./parse-worker.js";

/** Documents waiting for the parser past which another is refused (polls are 4 at a time per process). */
export const MAX_WAITING_PARSES = 32;
/** A parse taking longer than this ends the thread (a new one starts for the next document). */
export const PARSE_TIMEOUT_MS = 30_000;

export interface ParsedItems {
  title: string | undefined;
  /** Newest first, each key once. */
  items: ReadyItem[];
}

interface Job {
  request: Omit<ParseRequest, "id">;
  resolve: (parsed: ParsedItems) => void;
  reject: (error: Error) => void;
}

/**
 * The process's feed parser: one worker thread, one document at a time in the order asked, so a
 * large or hostile document costs that thread's time, never the event loop's.
 */
export class FeedParseThread {
  private worker: Worker | null = null;
  private readonly waiting: Job[] = [];
  private running: (Job & { id: number; timer: NodeJS.Timeout }) | null = null;
  private nextId = 1;

  /** The document's items as entries would hold them; throws FeedDocumentError for a document that is no feed. */
  parse(body: Uint8Array, contentType: string | undefined, baseUrl: string, maxContentBytes: number): Promise<ParsedItems> {
    if (this.waiting.length >= MAX_WAITING_PARSES) return Promise.reject(new FeedDocumentError("refused", "the feed parser is busy; the next poll tries again"));
    return new Promise((resolve, reject) => {
      this.waiting.push({ request: { body, contentType, baseUrl, maxContentBytes }, resolve, reject });
      this.next();
    });
  }

  /** Ends the thread (a closing server); documents still waiting fail. */
  async close(): Promise<void> {
    const worker = this.worker;
    this.worker = null;
    for (const job of this.waiting.splice(0)) job.reject(new FeedDocumentError("refused", "the server is stopping"));
    this.fail(new FeedDocumentError("refused", "the server is stopping"));
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
    const timer = setTimeout(() => this.fail(new FeedDocumentError("malformed", `parsing took longer than ${PARSE_TIMEOUT_MS / 1000} s`)), PARSE_TIMEOUT_MS);
    timer.unref();
    this.running = { ...job, id, timer };
    worker.ref();
    worker.postMessage({ id, ...job.request } satisfies ParseRequest);
  }

  private ensureWorker(): Worker {
    if (this.worker) return this.worker;
    const worker = startWorker(new URL("./parse-worker.js", import.meta.url));
    worker.on("message", (reply: ParseReply) => {
      const running = this.running;
      if (!running || running.id !== reply.id) return;
      clearTimeout(running.timer);
      this.running = null;
      if (reply.ok) running.resolve({ title: reply.title, items: reply.items });
      else if (reply.failure !== null) running.reject(new FeedDocumentError(reply.failure, reply.message));
      else running.reject(new InternalError("invariant", `parsing a feed failed: ${reply.message}`));
      this.next();
    });
    worker.on("error", (error) => this.fail(error));
    worker.on("exit", (code) => {
      if (this.worker === worker) this.fail(new InternalError("invariant", `the feed parser exited with code ${code}`));
    });
    this.worker = worker;
    return worker;
  }

  /** The running document fails and the thread goes; those waiting start on a new one. */
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
