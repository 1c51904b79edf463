import { closeSync, openSync, readSync } from "node:fs";
import { resolve } from "node:path";
import { srcModule } from "../../core/paths.js";
import { SerialWorker } from "../../core/worker-thread.js";
import type { CheckpointReply, CheckpointRequest } from "./checkpoint-worker.js";
import type { Db } from "./connection.js";

/** WAL frames not yet copied into the database from which a checkpoint starts: SQLite's own default. */
export const CHECKPOINT_FRAMES = 1_000;
const CHECKPOINT_TIMEOUT_MS = 5 * 60_000;
/** The wal-index format this reads (https://www.sqlite.org/walformat.html, "The WAL-Index Header"). */
const WAL_INDEX_VERSION = 3_007_000;

const ENDIAN = new Uint8Array(new Uint16Array([1]).buffer)[0] === 1 ? "LE" : "BE";

type Request = CheckpointRequest extends infer R ? (R extends CheckpointRequest ? Omit<R, "id"> : never) : never;

export interface WalProgress {
  /** Valid frames in the WAL (`mxFrame`). */
  frames: number;
  /** Of those, the frames already copied into the database (`nBackfill`). */
  backfilled: number;
}

/**
 * How far the WAL is ahead of the database, from the wal-index SQLite keeps in `<db>-shm` (its
 * first header's mxFrame, the checkpoint info's nBackfill; native byte order). Null when the
 * header is not one this reads. A read racing a commit may see a header a moment old: the count
 * only decides when to checkpoint, never what.
 */
export function readWalProgress(shm: number, buffer: Buffer = Buffer.alloc(100)): WalProgress | null {
  if (readSync(shm, buffer, 0, 100, 0) < 100) return null;
  const read32 = (offset: number): number => (ENDIAN === "LE" ? buffer.readUInt32LE(offset) : buffer.readUInt32BE(offset));
  if (read32(0) !== WAL_INDEX_VERSION || buffer[12] !== 1) return null;
  return { frames: read32(16), backfilled: read32(96) };
}


/**
 * Checkpoints the writer's WAL off the event loop (docs/decisions.md, "WAL checkpoints in a thread
 * of their own"). SQLite's automatic checkpoint runs inside the COMMIT that takes the WAL past
 * 1,000 frames, so the server's one thread waited on the disk for it. The writer runs with
 * `wal_autocheckpoint = 0`; after each commit the queue calls `committed`, which reads the
 * wal-index header (a 100-byte read) and, past the same 1,000 frames, hands a PASSIVE checkpoint
 * to a worker thread, started at the first one (an idle server never starts it). Should the
 * worker fail, or the header be unreadable, the writer goes back to SQLite's automatic
 * checkpoints and the failure is reported: the WAL never grows without bound.
 */
export class WalCheckpoints {
  private readonly header = Buffer.alloc(100);
  private shm: number | null = null;
  private running: Promise<void> | null = null;
  private started = false;
  private stopped = false;
  private readonly worker: SerialWorker<Request, CheckpointReply>;

  private constructor(
    private readonly writer: Db,
    private readonly file: string,
    private readonly onError: (error: unknown) => void,
    entry: URL,
  ) {
    this.worker = new SerialWorker<Request, CheckpointReply>({
      entry,
      timeoutMs: CHECKPOINT_TIMEOUT_MS,
      timedOut: () => new Error("a WAL checkpoint timed out"),
      exited: (code) => new Error(`the checkpoint worker exited with code ${code}`),
    });
  }

  /** For a writer with a WAL on disk (the store starts it only beside `walSync`, which checks that). */
  static start(writer: Db, file: string, onError: (error: unknown) => void, entry = srcModule("store/sqlite/checkpoint-worker.js")): WalCheckpoints {
    writer.sqlite.pragma("wal_autocheckpoint = 0");
    return new WalCheckpoints(writer, resolve(file), onError, entry);
  }

  /** A commit is done: starts a checkpoint when enough frames wait and none is running. */
  committed(): void {
    if (this.stopped || this.running) return;
    let progress: WalProgress | null;
    try {
      this.shm ??= openSync(`${this.file}-shm`, "r");
      progress = readWalProgress(this.shm, this.header);
    } catch (error) {
      return this.fallBack(error);
    }
    if (progress === null) return this.fallBack(new Error(`${this.file}-shm holds no wal-index this reads`));
    if (progress.frames - progress.backfilled < CHECKPOINT_FRAMES) return;
    this.started = true;
    this.running = this.worker
      .run({ type: "checkpoint", file: this.file })
      .then((reply) => {
        if (reply.type === "error") throw new Error(`WAL checkpoint: ${reply.message}`);
      })
      .catch((error: unknown) => this.fallBack(error))
      .finally(() => {
        this.running = null;
      });
  }

  /** Waits for a checkpoint under way, then ends the worker's connection and thread. */
  async close(): Promise<void> {
    this.stopped = true;
    await this.running;
    if (this.started) await this.worker.run({ type: "close" }).catch(() => undefined);
    await this.worker.stop(new Error("the store closed"));
    if (this.shm !== null) closeSync(this.shm);
    this.shm = null;
  }

  private fallBack(error: unknown): void {
    if (this.stopped) return;
    this.stopped = true;
    if (this.writer.open) this.writer.sqlite.pragma(`wal_autocheckpoint = ${CHECKPOINT_FRAMES}`);
    this.onError(error);
    void this.worker.stop(new Error("WAL checkpoints went back to the writer"));
  }
}
