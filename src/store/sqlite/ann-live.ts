import { randomBytes } from "node:crypto";
import { existsSync, readFileSync, renameSync, rmSync, writeFileSync } from "node:fs";
import { basename, dirname, join } from "node:path";
import Database from "better-sqlite3";
import hnswlib from "hnswlib-node";
import { fileSha256 } from "./ann-hash.js";

type Index = InstanceType<typeof hnswlib.HierarchicalNSW>;

/** What the thread needs to open the index of one store (ann.ts's settings, without the threshold). */
export interface LiveSettings {
  file: string;
  identity: string;
  dimensions: number;
  m: number;
  efConstruction: number;
  ef: number;
  saveEvery: number;
}

/**
 * What the live index tells its owner unasked: a save (the log may be pruned through its seq), a
 * failure, and whether the index was dropped (its owner opens it again; `message` null: it was
 * only stale).
 */
export type LiveNotice = { type: "saved"; seq: number } | { type: "failed"; message: string | null; dropped: boolean };

/** What is written beside the index file: which database state the index holds. */
interface Header {
  identity: string;
  seq: number;
  count: number;
  sha256: string;
  file: string;
}

/**
 * Changes a query applies itself before answering; when more are pending it answers null (the
 * caller scans) and they are applied between messages, a few per turn: adding a point to an
 * index of 100,000 costs about a millisecond (ef_construction 200).
 */
const CATCH_UP_PER_QUERY = 32;
const CATCH_UP_PER_TURN = 4;
const PAGE = 2_000;

/**
 * The HNSW index (hnswlib-node) of a SQLite store, owned by the index's worker thread
 * (ann-worker.ts), so that neither its searches nor adding each write's point run on the server's
 * event loop. It reads the database through a read-only connection of its own and follows it
 * through `vector_changes`, the log every embedding write appends to in its transaction: before a
 * search it applies the rows after the last seq it applied (an embedding present is added or
 * replaced, absent is marked deleted), so commits, rollbacks (no row) and other processes' writes
 * are all seen the same way. It is saved beside the database (`<db>.hnsw-<token>`, and
 * `<db>.hnsw.json` naming it, its seq and SHA-256) and loaded at the next start.
 */
export class LiveAnn {
  private index: Index | null = null;
  private seq = 0;
  private savedSeq = 0;
  private capacity = 0;
  private saving: Promise<void> | null = null;
  private catchingUp = false;
  private closed = false;
  private readonly db: Database.Database;
  // Prepared once: each search and each commit's catch-up runs them.
  private readonly state: Database.Statement<[], StoreState>;
  private readonly changes: Database.Statement<[number, number], { seq: number; pk: number }>;
  private readonly embeddings: Database.Statement<[string], { pk: number; embedding: Buffer }>;

  constructor(
    private readonly settings: LiveSettings,
    private readonly notify: (notice: LiveNotice) => void,
  ) {
    this.db = new Database(settings.file, { readonly: true, fileMustExist: true });
    this.db.pragma("busy_timeout = 5000");
    // The vectors read through the OS's page cache, as the server's own connections read them.
    this.db.pragma("mmap_size = 1073741824");
    this.state = this.db.prepare(
      `SELECT (SELECT value FROM meta WHERE key = 'vector_model') AS model, (SELECT value FROM meta WHERE key = 'vector_dimensions') AS dimensions,
       (SELECT value FROM meta WHERE key = 'vector_layout') AS layout, (SELECT value FROM meta WHERE key = 'vector_generation') AS generation,
       (SELECT value FROM meta WHERE key = 'vector_changes_pruned') AS pruned`,
    );
    this.changes = this.db.prepare("SELECT seq, pk FROM vector_changes WHERE seq > ? ORDER BY seq LIMIT ?");
    this.embeddings = this.db.prepare("SELECT pk, embedding FROM memory_embeddings WHERE pk IN (SELECT value FROM json_each(?))");
  }

  /** Loads the saved index when it is this database's and intact, else builds one; then catches up. */
  async open(): Promise<{ seq: number; count: number }> {
    const index = new hnswlib.HierarchicalNSW("cosine", this.settings.dimensions);
    const loaded = (await this.loadSaved(index)) ?? (await this.build(index));
    this.index = index;
    this.seq = loaded.seq;
    this.savedSeq = loaded.seq;
    this.capacity = index.getMaxElements();
    this.scheduleCatchUp();
    return { seq: loaded.seq, count: index.getCurrentCount() };
  }

  /**
   * Labels (memory pks) of about the `n` nearest points; null when the index cannot answer now
   * (behind by more than a query applies) and the caller scans. Throws when the index is no longer
   * this database's: it is dropped, and its owner opens it again.
   */
  search(vector: Float32Array, n: number): number[] | null {
    const index = this.usable();
    if (!this.catchUp(index, CATCH_UP_PER_QUERY)) return null;
    if (n === 0 || vector.length === 0) return [];
    index.setEf(Math.max(this.settings.ef, n));
    return index.searchKnn(Array.from(vector), n).neighbors;
  }

  /** Applies every pending change (after a save under way): the index is then the database as of now. */
  async current(): Promise<void> {
    for (;;) {
      while (this.saving) await this.saving.catch(() => undefined);
      if (this.catchUp(this.usable(), Infinity)) return;
    }
  }

  /** A write committed: applied between the next messages rather than by the next query. */
  changed(): void {
    if (this.index && !this.closed) this.scheduleCatchUp();
  }

  /** Saves what the file does not hold yet, then lets go of the connection. */
  async close(): Promise<void> {
    this.closed = true;
    while (this.saving) await this.saving.catch(() => undefined);
    try {
      if (this.index && this.seq > this.savedSeq) await this.save();
    } finally {
      this.index = null;
      this.db.close();
    }
  }

  /** Lets go of the index without saving it (stale, or replaced by another). */
  discard(): void {
    this.closed = true;
    this.index = null;
    // A save under way writes its file from the index it holds, without the connection.
    this.db.close();
  }

  /** The index, when it is still this database's; else it is dropped (a new model, another process's pruning). */
  private usable(): Index {
    const index = this.index;
    if (!index || this.closed) throw new Error("the HNSW index is not open");
    const state = this.state.get() as StoreState;
    if (identityOf(state) !== this.settings.identity) return this.drop("the store's vectors changed model or generation");
    if (Number(state.pruned ?? 0) > this.seq) return this.drop("another process pruned changes this index never applied");
    return index;
  }

  private drop(reason: string): never {
    this.index = null;
    throw new StaleIndex(reason);
  }

  private prunedThrough(): number {
    return Number((this.state.get() as StoreState).pruned ?? 0);
  }

  /**
   * Adds every embedding, read inside one read transaction so the index holds exactly the database
   * as of the log seq it reports, and saves it.
   */
  private async build(index: Index): Promise<{ seq: number; count: number }> {
    const { dimensions, m, efConstruction } = this.settings;
    let seq: number;
    let count = 0;
    this.db.exec("BEGIN");
    try {
      seq = (this.db.prepare("SELECT seq FROM sqlite_sequence WHERE name = 'vector_changes'").get() as { seq: number } | undefined)?.seq ?? 0;
      const total = (this.db.prepare("SELECT count(*) AS n FROM memory_embeddings").get() as { n: number }).n;
      index.initIndex({ maxElements: Math.max(1_000, Math.ceil(total * 1.25)), m, efConstruction });
      const page = this.db.prepare("SELECT pk, embedding FROM memory_embeddings WHERE pk > ? ORDER BY pk LIMIT ?");
      let after = -1;
      for (;;) {
        const rows = page.all(after, PAGE) as { pk: number; embedding: Buffer }[];
        for (const row of rows) {
          const vector = new Float32Array(row.embedding.buffer, row.embedding.byteOffset, row.embedding.byteLength / 4);
          if (vector.length !== dimensions) continue;
          if (count >= index.getMaxElements()) index.resizeIndex(Math.ceil(index.getMaxElements() * 1.5));
          index.addPoint(Array.from(vector), row.pk);
          count += 1;
        }
        if (rows.length < PAGE) break;
        after = (rows.at(-1) as { pk: number }).pk;
      }
    } finally {
      this.db.exec("COMMIT");
    }
    await this.writeFile(index, seq);
    return { seq, count };
  }

  /**
   * Reads the saved index into `index` when the header names an intact file of this database that
   * holds every pruned change. Another process may save a newer one meanwhile and remove the file
   * being read: then the newer one is tried, a few times, before the caller builds.
   */
  private async loadSaved(index: Index): Promise<Header | null> {
    for (let attempt = 0; attempt < 3; attempt++) {
      const header = this.readHeader();
      if (!header || header.identity !== this.settings.identity || header.seq < this.prunedThrough()) return null;
      const saved = join(dirname(this.settings.file), basename(header.file));
      if (existsSync(saved)) {
        try {
          // A file that is not the one written (torn, replaced, another database's) is never handed
          // to hnswlib, whose reader trusts the sizes it finds in the file.
          if ((await fileSha256(saved)) === header.sha256 && (await index.readIndex(saved))) return header;
        } catch {
          // Removed while read, by a process that saved a newer index: looked at again below.
        }
      }
      if (this.readHeader()?.file === header.file) return null;
    }
    return null;
  }

  private headerPath(): string {
    return `${this.settings.file}.hnsw.json`;
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

  /** Writes the index to a new file (hnswlib writes it on libuv's pool), and points the header at it (atomically). */
  private async writeFile(index: Index, seq: number): Promise<void> {
    const out = `${this.settings.file}.hnsw-${randomBytes(6).toString("hex")}`;
    try {
      await index.writeIndex(out);
      const header: Header = { identity: this.settings.identity, seq, count: index.getCurrentCount(), sha256: await fileSha256(out), file: basename(out) };
      const previous = this.readHeader();
      const temp = `${this.headerPath()}.${randomBytes(4).toString("hex")}`;
      writeFileSync(temp, JSON.stringify(header), { mode: 0o600 });
      renameSync(temp, this.headerPath());
      if (previous && previous.file !== header.file) rmSync(join(dirname(this.settings.file), basename(previous.file)), { force: true });
    } catch (error) {
      rmSync(out, { force: true });
      throw error;
    }
  }

  /**
   * Applies up to `limit` logged changes; true when the index is then current. Never while the
   * index is being written to its file (hnswlib's writer reads it from another thread).
   */
  private catchUp(index: Index, limit: number): boolean {
    const take = Number.isFinite(limit) ? limit + 1 : -1;
    const rows = this.changes.all(this.seq, take);
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
    for (const row of this.embeddings.all(JSON.stringify(pks))) present.set(row.pk, row.embedding);
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
    if (this.seq - this.savedSeq >= this.settings.saveEvery && !this.saving && !this.closed) void this.periodicSave();
  }

  /** Applies the log between messages, a few changes per turn, until current. */
  private scheduleCatchUp(): void {
    if (this.catchingUp) return;
    this.catchingUp = true;
    const step = (): void => {
      try {
        const index = this.index;
        if (this.closed || !index || this.saving || this.catchUp(this.usable(), CATCH_UP_PER_TURN)) {
          this.catchingUp = false;
          return;
        }
      } catch (error) {
        this.catchingUp = false;
        this.index = null;
        this.notify({ type: "failed", message: error instanceof StaleIndex ? null : messageOf(error), dropped: true });
        return;
      }
      setImmediate(step);
    };
    setImmediate(step);
  }

  /** A save past `saveEvery` changes, after which the owner prunes the log through the seq it holds. */
  private async periodicSave(): Promise<void> {
    const seq = this.seq;
    try {
      await this.save();
      if (!this.closed) this.notify({ type: "saved", seq });
    } catch (error) {
      // The index stays usable; it is saved again after the next changes.
      this.notify({ type: "failed", message: messageOf(error), dropped: false });
    }
  }

  private async save(): Promise<void> {
    const index = this.index;
    if (!index) return;
    const seq = this.seq;
    const saving = this.writeFile(index, seq).then(() => {
      this.savedSeq = seq;
    });
    this.saving = saving;
    try {
      await saving;
    } finally {
      this.saving = null;
    }
    if (this.index && !this.closed) this.scheduleCatchUp();
  }
}

/** The store's vector identity and the change log's pruned point, as one read. */
interface StoreState {
  model: string | null;
  dimensions: string | null;
  layout: string | null;
  generation: string | null;
  pruned: string | null;
}

/** The model, dimensions, layout and generation an index is of (ann.ts computes the same from its own read). */
const identityOf = (row: StoreState): string | null =>
  row.model && row.dimensions && row.layout ? `${row.model}|${row.dimensions}|${row.layout}|${row.generation ?? ""}` : null;

/** The index is no longer the database's (a new model, pruning elsewhere): its owner opens it again. */
export class StaleIndex extends Error {}

export const messageOf = (error: unknown): string => (error instanceof Error ? error.message : String(error));
