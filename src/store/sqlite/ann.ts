import { randomBytes } from "node:crypto";
import { existsSync, readFileSync, renameSync, rmSync, writeFileSync } from "node:fs";
import { basename, dirname, join } from "node:path";
import type hnswlib from "hnswlib-node";
import { srcModule } from "../../core/paths.js";
import { SerialWorker } from "../../core/worker-thread.js";
import { fileSha256 } from "./ann-hash.js";
import type { AnnWorkerReply, AnnWorkerRequest } from "./ann-worker.js";
import type { Db } from "./connection.js";
import { connectionOf } from "./transactions.js";
import { changesAfter, changesPrunedThrough, identityDimensions, TurnLoop, vectorIdentity } from "./vector-log.js";
import type { Reader } from "../store.js";
import type { IndexStatus } from "../vectors.js";

type Index = InstanceType<typeof hnswlib.HierarchicalNSW>;
type Request = AnnWorkerRequest extends infer R ? (R extends AnnWorkerRequest ? Omit<R, "id"> : never) : never;

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

export const ANN_DEFAULTS: AnnSettings = { threshold: 150_000, m: 16, efConstruction: 200, ef: 200, saveEvery: 20_000 };

/**
 * Changes a query applies itself before answering; when more are pending it scans, and they are
 * applied in the background, a slice per turn of the event loop. Adding a point to an index of
 * 100,000 costs about a millisecond (ef_construction 200), so neither blocks the loop for long.
 */
const CATCH_UP_PER_QUERY = 32;
const CATCH_UP_PER_TURN = 16;
/** How often a store below the threshold counts its vectors again. */
const RECOUNT_MS = 5_000;
/** A failed build or load is not tried again before this. */
const RETRY_MS = 60_000;
const BUILD_TIMEOUT_MS = 60 * 60_000;

/** What is written beside the index file: which database state the index holds. */
interface Header {
  identity: string;
  seq: number;
  count: number;
  sha256: string;
  file: string;
}

const workerEntry = srcModule("store/sqlite/ann-worker.js");

/**
 * An HNSW index (hnswlib-node) of a SQLite store's embeddings, in this process's memory: a
 * candidate generator only. The vec0 table and `memory_embeddings` stay the truth; the caller
 * (vectors.ts) checks every candidate against the query's filters in SQL and ranks by exact cosine.
 *
 * It follows the database through `vector_changes`, the log every embedding write appends to in
 * its transaction: before answering it applies the rows after the last seq it applied (an
 * embedding present is added or replaced, absent is marked deleted), so commits, rollbacks (no row)
 * and other processes' writes are all seen the same way. It is built in a worker thread, saved
 * beside the database (`<db>.hnsw-<token>` and `<db>.hnsw.json` naming it, its seq and SHA-256) and
 * loaded at the next start; until it is ready, or while it is behind by more than a query should
 * apply, `candidates` answers null and the caller scans.
 */
export class SqliteAnn {
  private index: Index | null = null;
  private identity: string | null = null;
  private seq = 0;
  private savedSeq = 0;
  private capacity = 0;
  private busy: Promise<void> | null = null;
  private saving = false;
  private readonly catchingUp = new TurnLoop(
    () => this.closed || !this.index || this.saving || this.catchUp(CATCH_UP_PER_TURN) || !this.index,
    (error) => {
      this.drop();
      this.failedAt = performance.now();
      this.onError(error);
    },
  );
  private closed = false;
  private lastCount = -Infinity;
  private failedAt = -Infinity;
  private readonly worker = new SerialWorker<Request, AnnWorkerReply>({
    entry: workerEntry,
    timeoutMs: BUILD_TIMEOUT_MS,
    timedOut: () => new Error("building the HNSW index timed out"),
    exited: (code) => new Error(`the HNSW worker exited with code ${code}`),
  });

  constructor(
    private readonly file: string,
    /**
     * The store's read handle, which sees only what is committed: the writer between its
     * transactions (whose cache its own commits leave warm), the query-only reader during one.
     */
    private readonly reader: Reader,
    private readonly settings: AnnSettings,
    /** Deletes the log through a seq, in a write transaction of the store. */
    private readonly prune: (through: number) => Promise<void>,
    private readonly onError: (error: unknown) => void,
  ) {}

  private get db(): Db {
    return connectionOf(this.reader);
  }

  get status(): IndexStatus {
    if (this.index) return "ready";
    return this.busy ? "building" : "off";
  }

  /** Resolves once the index is ready (true) or cannot be now (false: below the threshold, failed, closed). */
  async ready(): Promise<boolean> {
    for (;;) {
      // Starts a load or build when one is due; another process's pruning may drop the index on the way.
      this.candidates(new Float32Array(0), 0);
      while (this.busy) await this.busy;
      if (!this.index || this.closed) return false;
      if (this.catchUp(Infinity)) return true;
      await new Promise((resolve) => setImmediate(resolve));
    }
  }

  /**
   * Labels (memory pks) of about the `n` nearest points, or null when the index cannot answer
   * now (not built, of another model, behind): the caller scans instead.
   */
  candidates(vector: Float32Array, n: number): number[] | null {
    if (this.closed) return null;
    try {
      return this.search(vector, n);
    } catch (error) {
      // A search never fails for the index's sake: it scans, and the index is built again later.
      this.drop();
      this.failedAt = performance.now();
      this.onError(error);
      return null;
    }
  }

  private search(vector: Float32Array, n: number): number[] | null {
    // Without an index, and before a build is due, there is nothing to check the database for: a
    // store below the threshold would otherwise read its identity on every search and every write.
    if (!this.index && !this.startDue()) return null;
    const identity = vectorIdentity(this.db);
    if (identity === null) return null;
    if (this.index && this.identity !== identity) this.drop();
    if (!this.index) {
      this.start(identity);
      return null;
    }
    if (!this.catchUp(CATCH_UP_PER_QUERY)) {
      // Dropped because another process pruned the log past it: its newer file is loaded now, not
      // at the next query (which `ready` would not make).
      if (!this.index) this.start(identity);
      return null;
    }
    if (n === 0 || vector.length === 0) return [];
    this.index.setEf(Math.max(this.settings.ef, n));
    return this.index.searchKnn(Array.from(vector), n).neighbors;
  }

  /** A write of this process committed: apply it in the background rather than in the next query. */
  changed(): void {
    if (this.index && !this.closed) this.scheduleCatchUp();
  }

  async close(): Promise<void> {
    this.closed = true;
    await this.worker.stop(new Error("the store closed"));
    while (this.busy) await this.busy.catch(() => undefined);
    if (this.index && this.seq > this.savedSeq && !this.saving) await this.save(false).catch(this.onError);
    this.index = null;
  }

  private drop(): void {
    this.index = null;
    this.identity = null;
  }

  /** Whether `start` would look at the store now: nothing is loading, and no failure or count is recent. */
  private startDue(): boolean {
    const at = performance.now();
    return !this.busy && at - this.failedAt >= RETRY_MS && at - this.lastCount >= RECOUNT_MS;
  }

  private start(identity: string): void {
    if (!this.startDue()) return;
    this.lastCount = performance.now();
    // vec0's rowid table: counting `memory_embeddings` reads every vector's page.
    const count = this.db.get<{ n: number }>("SELECT count(*) AS n FROM memory_vectors_rowids")?.n ?? 0;
    if (count < this.settings.threshold) return;
    this.busy = this.open(identity)
      .catch((error: unknown) => {
        this.failedAt = performance.now();
        this.drop();
        if (!this.closed) this.onError(error);
      })
      .finally(() => {
        this.busy = null;
        this.lastCount = -Infinity;
      });
  }

  private headerPath(): string {
    return `${this.file}.hnsw.json`;
  }

  private readHeader(): Header | null {
    try {
      const header = JSON.parse(readFileSync(this.headerPath(), "utf8")) as Header;
      return typeof header.identity === "string" && typeof header.sha256 === "string" && typeof header.file === "string" && Number.isInteger(header.seq)
        ? header
        : null;
    } catch {
      return null;
    }
  }

  private async call(request: Request): Promise<AnnWorkerReply> {
    const reply = await this.worker.run(request);
    if (reply.type === "error") throw new Error(`HNSW worker: ${reply.message}`);
    return reply;
  }

  /** Loads the saved index when it is this database's and intact, else builds one in the worker. */
  private async open(identity: string): Promise<void> {
    const dimensions = identityDimensions(identity);
    // Loaded when a store first reaches the threshold: small stores never load the native addon.
    const { HierarchicalNSW } = (await import("hnswlib-node")).default;
    const index = new HierarchicalNSW("cosine", dimensions);
    let loaded: { seq: number; count: number } | null = await this.loadSaved(index, identity);
    if (!loaded) {
      const out = `${this.file}.hnsw-${randomBytes(6).toString("hex")}`;
      try {
        const built = await this.call({ type: "build", file: this.file, out, dimensions, m: this.settings.m, efConstruction: this.settings.efConstruction });
        if (built.type !== "built") throw new Error("unexpected reply from the HNSW worker");
        if (this.closed) throw new Error("the store closed");
        if (!(await index.readIndex(out))) throw new Error("the built HNSW index could not be read");
        this.writeHeader({ identity, seq: built.seq, count: built.count, sha256: built.sha256, file: basename(out) });
        loaded = built;
      } catch (error) {
        rmSync(out, { force: true });
        throw error;
      }
    }
    if (this.closed) return;
    this.index = index;
    this.identity = identity;
    this.seq = loaded.seq;
    this.savedSeq = loaded.seq;
    this.capacity = index.getMaxElements();
    this.scheduleCatchUp();
  }

  /**
   * Reads the saved index into `index` when the header names an intact file of this database that
   * holds every pruned change. Another process may save a newer one meanwhile and remove the file
   * being read: then the newer one is tried, a few times, before the caller builds.
   */
  private async loadSaved(index: Index, identity: string): Promise<Header | null> {
    for (let attempt = 0; attempt < 3; attempt++) {
      const header = this.readHeader();
      if (!header || header.identity !== identity || header.seq < changesPrunedThrough(this.db)) return null;
      const saved = join(dirname(this.file), basename(header.file));
      if (existsSync(saved)) {
        try {
          const check = await this.call({ type: "hash", path: saved });
          // A file that is not the one written (torn, replaced, another database's) is never handed
          // to hnswlib, whose reader trusts the sizes it finds in the file.
          if (check.type === "hashed" && check.sha256 === header.sha256 && (await index.readIndex(saved))) return header;
        } catch (error) {
          if (this.closed) throw error;
          // Removed while read, by a process that saved a newer index: looked at again below.
        }
      }
      if (this.readHeader()?.file === header.file) return null;
    }
    return null;
  }

  /** Points the header at a new index file (atomically) and removes the one it named before. */
  private writeHeader(header: Header): void {
    const previous = this.readHeader();
    const temp = `${this.headerPath()}.${randomBytes(4).toString("hex")}`;
    writeFileSync(temp, JSON.stringify(header), { mode: 0o600 });
    renameSync(temp, this.headerPath());
    if (previous && previous.file !== header.file) rmSync(join(dirname(this.file), basename(previous.file)), { force: true });
  }

  /**
   * Applies up to `limit` logged changes; true when the index is then current. Never while the
   * index is being written to its file (hnswlib's writer reads it from another thread).
   */
  private catchUp(limit: number): boolean {
    const index = this.index;
    if (!index) return false;
    const take = Number.isFinite(limit) ? limit + 1 : -1;
    const { changes: rows, prunedThrough } = changesAfter(this.db, this.seq, take);
    if (prunedThrough > this.seq) {
      // Another process pruned changes this index never applied: load its newer file.
      this.drop();
      return false;
    }
    if (rows.length === 0) return true;
    if (this.saving || rows.length > limit) {
      this.scheduleCatchUp();
      return false;
    }
    this.apply(index, rows);
    return true;
  }

  private apply(index: Index, rows: { seq: number; pk: number }[]): void {
    const pks = [...new Set(rows.map((row) => row.pk))];
    const present = new Map<number, Buffer>();
    for (const row of this.db.all<{ pk: number; embedding: Buffer }>(
      "SELECT pk, embedding FROM memory_embeddings WHERE pk IN (SELECT value FROM json_each(?))",
      JSON.stringify(pks),
    )) {
      present.set(row.pk, row.embedding);
    }
    for (const pk of pks) {
      const bytes = present.get(pk);
      if (bytes) {
        if (index.getCurrentCount() >= this.capacity) {
          this.capacity = Math.ceil(this.capacity * 1.5);
          index.resizeIndex(this.capacity);
        }
        index.addPoint(Array.from(new Float32Array(bytes.buffer, bytes.byteOffset, bytes.byteLength / 4)), pk);
      } else {
        try {
          index.markDelete(pk);
        } catch {
          // Never added, or deleted already.
        }
      }
    }
    this.seq = (rows.at(-1) as { seq: number }).seq;
    if (this.seq - this.savedSeq >= this.settings.saveEvery && !this.saving && !this.closed) void this.save(true).catch(this.onError);
  }

  /** Applies the log in the background, a slice per turn of the event loop, until current. */
  private scheduleCatchUp(): void {
    this.catchingUp.start();
  }

  /** Writes the index to a new file (off the event loop), points the header at it, and prunes the log it holds. */
  private async save(prune: boolean): Promise<void> {
    const index = this.index;
    const identity = this.identity;
    if (!index || identity === null) return;
    this.saving = true;
    const seq = this.seq;
    const out = `${this.file}.hnsw-${randomBytes(6).toString("hex")}`;
    try {
      await index.writeIndex(out);
      // Hashed in the worker, except once the store is closing: its worker is stopped for good then.
      const sha256 = this.closed ? await fileSha256(out) : await this.call({ type: "hash", path: out }).then((reply) => (reply.type === "hashed" ? reply.sha256 : ""));
      if (!sha256) throw new Error("unexpected reply from the HNSW worker");
      this.writeHeader({ identity, seq, count: index.getCurrentCount(), sha256, file: basename(out) });
      this.savedSeq = seq;
    } catch (error) {
      rmSync(out, { force: true });
      throw error;
    } finally {
      this.saving = false;
    }
    if (prune) await this.prune(seq);
  }
}
