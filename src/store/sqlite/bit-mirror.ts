import { setImmediate as nextTurn } from "node:timers/promises";
import type { Db } from "./connection.js";
import { connectionOf } from "./transactions.js";
import type { Reader } from "../store.js";
import type { IndexStatus, VectorMeta } from "../vectors.js";
import { MirrorTable, PARTITIONING, signBits, SHORTLIST, type MirrorFilter, type MirrorRow, type Partitioning, type Shortlist } from "./mirror-table.js";
import { changesAfter, identityDimensions, lastChangeSeq, TurnLoop, vectorIdentity } from "./vector-log.js";

/** A change this process committed, as its transaction logged it: the row it left (null: none). */
export interface LocalChange {
  seq: number;
  pk: number;
  vector: Float32Array | null;
  meta: VectorMeta | null;
}

const COLUMNS =
  "pk, bits, vis_key, owner_key, project_key, type, agent_id, confidence, expires_ms, (SELECT embedding FROM memory_embeddings AS e WHERE e.pk = memory_vectors.pk) AS embedding";
/** Rows read per turn of the event loop while the mirror is built (about 3 ms on this class of machine). */
const PAGE = 250;
/** A page of the build: every embedding after a pk, with its vec0 row's columns (none: `vector_pk` null). */
const PAGE_SQL = `SELECT e.pk AS pk, v.pk AS vector_pk, v.bits AS bits, v.vis_key AS vis_key, v.owner_key AS owner_key, v.project_key AS project_key,
    v.type AS type, v.agent_id AS agent_id, v.confidence AS confidence, v.expires_ms AS expires_ms, e.embedding AS embedding
  FROM memory_embeddings AS e LEFT JOIN memory_vectors AS v ON v.pk = e.pk WHERE e.pk > ? ORDER BY e.pk LIMIT ?`;
/** Changes a scan applies itself before answering; with more pending it declines, and they are applied in the background. */
const CATCH_UP_PER_QUERY = 64;
const CATCH_UP_PER_TURN = 64;
/** Past this many vectors no mirror is kept (about 110 bytes a row and a byte a dimension): the HNSW index serves such a store. */
export const MIRROR_MAX_ROWS = 200_000;

/**
 * The mirror's limit for a store whose HNSW index starts at `annThreshold` vectors: a store below
 * the threshold is never left to vec0's scan, which takes tens of milliseconds a query past
 * 200,000 rows, so a higher threshold raises the limit with it (and the mirror's memory).
 */
export const mirrorMaxRows = (annThreshold: number): number => Math.max(MIRROR_MAX_ROWS, annThreshold);

/** How long after a local commit the background catch-up looks at the log, if no scan has by then. */
const IDLE_CATCH_UP_MS = 100;
/** Local changes held for the catch-up at most: past this, it reads them back like another process's. */
const MAX_KNOWN = 4096;
/** A failed or declined build is not tried again before this. */
const RETRY_MS = 60_000;

export interface MirrorOptions {
  /** Past this many vectors no mirror is kept (default `MIRROR_MAX_ROWS`). */
  maxRows?: number;
  shortlist?: Shortlist;
  partitioning?: Partitioning;
}

/**
 * The vec0 table's binary-quantized vectors and filter columns, with each embedding's int8
 * components, copied into this process's memory and scanned there (mirror-table.ts) without
 * reading SQLite's pages: the bit scan (Hamming distance, every filter applied before counting)
 * shortlists rows, and the int8 cosine picks the candidates among them. A candidate generator
 * only: the caller ranks what it returns by exact cosine from `memory_embeddings`, as it does
 * vec0's.
 *
 * It follows the database as the HNSW index does (ann.ts), through `vector_changes`: every
 * embedding or filter change appends the entry's pk there in its transaction, and before answering
 * the mirror applies what was logged since the last seq it applied, reading each such entry's row
 * as it now is (present: copied again; absent: removed). It is built in the background, a page per
 * turn, the first time a scan asks; until it is ready, while it is behind by more than a scan
 * should apply, and for a filter it does not hold (a tag), `candidates` answers null and the
 * caller asks vec0.
 */
export class BitMirror {
  private identity: string | null = null;
  private ready = false;
  private seq = 0;
  /** The rows, once built; null while there is no mirror. */
  private table: MirrorTable | null = null;
  /** This process's committed changes by seq, not yet reached by the catch-up: applied without reading vec0. */
  private readonly known = new Map<number, MirrorRow | null>();
  private building: Promise<void> | null = null;
  /** A partition of the table in progress. */
  private partitionDone: Promise<unknown> | null = null;
  private readonly catchingUp = new TurnLoop(
    () => this.closed || !this.ready || this.catchUp(CATCH_UP_PER_TURN),
    (error) => {
      this.drop();
      this.failedAt = performance.now();
      this.onError(error);
    },
  );
  private closed = false;
  /** Until the first scan or `settled` looks at the store: the copy is still to be made. */
  private waiting = true;
  private failedAt = -Infinity;
  private readonly maxRows: number;
  private readonly shortlist: Shortlist;
  private readonly partitioning: Partitioning;

  constructor(
    /**
     * The store's read handle, which sees only what is committed: the writer between its
     * transactions (whose cache its own commits leave warm), the query-only reader during one.
     */
    private readonly reader: Reader,
    private readonly onError: (error: unknown) => void,
    options: MirrorOptions = {},
  ) {
    this.maxRows = options.maxRows ?? MIRROR_MAX_ROWS;
    this.shortlist = options.shortlist ?? SHORTLIST;
    this.partitioning = options.partitioning ?? PARTITIONING;
  }

  private get db(): Db {
    return connectionOf(this.reader);
  }

  /**
   * `building` also before the first scan or `settled` starts the copy, and while the copy is
   * partitioned into lists; `off` with nothing to copy, past the limit, or failed.
   */
  get status(): IndexStatus {
    if (this.ready) return this.partitionDone ? "building" : "ready";
    return this.building || (this.waiting && !this.closed) ? "building" : "off";
  }

  /** Lists the copy is partitioned into (mirror-lists.ts); 0 while it is not. */
  get lists(): number {
    return this.table?.listCount ?? 0;
  }

  /** Resolves once the mirror is ready, partitioned if its size calls for it, and current (true), or cannot be now (false). */
  async settled(): Promise<boolean> {
    for (;;) {
      this.candidates(new Float32Array(0), 0, { column: "vis_key", keys: [], nowMs: 0 });
      while (this.building) await this.building;
      if (!this.ready || this.closed) return false;
      if (this.partitionDone) await this.partitionDone;
      else if (this.catchUp(Infinity)) return true;
      else await nextTurn();
    }
  }

  /**
   * Pks of `k` rows passing `filter` near `vector` (`MirrorTable.nearest`: the bit scan's shortlist
   * ranked by int8 cosine), or null when the mirror cannot answer now.
   */
  candidates(vector: Float32Array, k: number, filter: MirrorFilter): number[] | null {
    if (this.closed) return null;
    try {
      return this.search(vector, k, filter);
    } catch (error) {
      // A scan never fails for the mirror's sake: vec0 answers, and the mirror is built again later.
      this.drop();
      this.failedAt = performance.now();
      this.onError(error);
      return null;
    }
  }

  /**
   * Changes of this process committed: the catch-up takes their rows from here instead of reading
   * them back from vec0, and runs in the background rather than in the next scan.
   */
  committed(changes: readonly LocalChange[]): void {
    if (!this.ready || this.closed) return;
    for (const change of changes) {
      if (change.seq <= this.seq || this.known.size >= MAX_KNOWN) continue;
      const { vector, meta } = change;
      if (!vector || !meta) this.known.set(change.seq, null);
      else if (vector.length === this.table?.dimensions) this.known.set(change.seq, rowOf(change.pk, vector, meta));
    }
    // Later rather than at once: on a busy server the scans apply them first, and this finds nothing.
    this.scheduleCatchUp(IDLE_CATCH_UP_MS);
  }

  close(): void {
    this.closed = true;
    this.drop();
  }

  private search(vector: Float32Array, k: number, filter: MirrorFilter): number[] | null {
    if (!this.ready) {
      if (this.building || performance.now() - this.failedAt < RETRY_MS) return null;
      this.waiting = false;
      const identity = vectorIdentity(this.db);
      if (identity !== null) this.start(identity);
      return null;
    }
    if (!this.catchUp(CATCH_UP_PER_QUERY)) return null;
    const table = this.table as MirrorTable;
    if (vector.length !== table.dimensions) return null;
    if (k <= 0) return [];
    return table.nearest(vector, k, filter);
  }

  private drop(): void {
    this.ready = false;
    this.identity = null;
    this.known.clear();
    this.table = null;
  }

  private start(identity: string): void {
    this.building = this.build(identity)
      .catch((error: unknown) => {
        this.drop();
        if (!this.closed) this.onError(error);
      })
      .finally(() => {
        this.building = null;
        if (!this.ready) this.failedAt = performance.now();
      });
  }

  /**
   * Copies every row, a page per turn. Changes committed meanwhile are in the log after `seq`,
   * read before the first page: applying them once the copy is done leaves every row as it now is,
   * whether a page read it before or after it changed.
   */
  private async build(identity: string): Promise<void> {
    const count = this.db.get<{ n: number }>("SELECT count(*) AS n FROM memory_vectors_rowids")?.n ?? 0;
    if (count > this.maxRows) return;
    const table = new MirrorTable(identityDimensions(identity), this.shortlist, this.partitioning);
    const seq = lastChangeSeq(this.db);
    let after = 0;
    for (;;) {
      if (this.closed || vectorIdentity(this.db) !== identity || table.count > this.maxRows) return;
      // Paged by the embeddings' table, each row's vec0 columns joined by pk: vec0 answers a range
      // of pks only by scanning every row (a page of 500 took 32 ms at 100,000 rows), a pk at once.
      // One statement a page, not one a row: 2.6 ms a page against 4.9 at 100,000 rows.
      const page = this.db.all<MirrorRow & { vector_pk: number | null }>(PAGE_SQL, after, PAGE);
      for (const row of page) if (row.vector_pk !== null) table.upsert(row);
      if (page.length < PAGE) break;
      after = (page.at(-1) as { pk: number }).pk;
      await nextTurn();
    }
    this.table = table;
    this.seq = seq;
    this.identity = identity;
    this.ready = true;
    this.scheduleCatchUp();
    this.partitionIfDue();
  }

  /** Partitions the table in the background when it has grown into (or out of) a partition. */
  private partitionIfDue(): void {
    const { table } = this;
    if (!table?.partitionDue) return;
    const goOn = async (): Promise<boolean> => {
      await nextTurn();
      return !this.closed && this.table === table;
    };
    this.partitionDone = table
      .partition(goOn)
      .catch((error: unknown) => {
        // Coarse scans read no partition then; full scans answer as before.
        if (this.table === table) this.onError(error);
      })
      .finally(() => {
        this.partitionDone = null;
      });
  }

  /**
   * Applies up to `limit` logged changes, in order; true when the mirror is then current. Each
   * leaves its row as the change left it (a local one) or as it is now (read back): never older
   * than the log's position, which is all a scan needs.
   */
  private catchUp(limit: number): boolean {
    if (!this.ready) return false;
    const { changes, prunedThrough, identity } = changesAfter(this.db, this.seq, Number.isFinite(limit) ? limit + 1 : -1);
    if (prunedThrough > this.seq || identity !== this.identity) {
      // Pruned before this mirror applied them (a save of the HNSW index), or another model's: copied again.
      this.drop();
      return false;
    }
    if (changes.length === 0) return true;
    if (changes.length > limit) {
      this.scheduleCatchUp();
      return false;
    }
    const table = this.table as MirrorTable;
    const readBack = new Set<number>();
    for (const { seq, pk } of changes) {
      const local = this.known.get(seq);
      this.known.delete(seq);
      if (local !== undefined && (local === null || local.pk === pk)) {
        if (local) table.upsert(local);
        else table.remove(pk);
        continue;
      }
      if (readBack.has(pk)) continue;
      readBack.add(pk);
      const row = this.rowAt(pk);
      if (row) table.upsert(row);
      else table.remove(pk);
    }
    this.seq = (changes.at(-1) as { seq: number }).seq;
    if (table.count > this.maxRows) this.drop();
    else this.partitionIfDue();
    return this.ready;
  }

  private rowAt(pk: number): MirrorRow | undefined {
    return this.db.get<MirrorRow>(`SELECT ${COLUMNS} FROM memory_vectors WHERE pk = ?`, BigInt(pk));
  }

  /** Applies the log in the background, a slice per turn of the event loop, until current. */
  private scheduleCatchUp(afterMs = 0): void {
    this.catchingUp.start(afterMs);
  }
}

/** A local change as the row vec0 holds after it. */
function rowOf(pk: number, vector: Float32Array, meta: VectorMeta): MirrorRow {
  return {
    pk,
    bits: signBits(vector),
    embedding: vector,
    vis_key: meta.visKey,
    owner_key: meta.ownerKey,
    project_key: meta.projectKey,
    type: meta.type,
    agent_id: meta.agentId,
    confidence: meta.confidence,
    expires_ms: meta.expiresMs,
  };
}
