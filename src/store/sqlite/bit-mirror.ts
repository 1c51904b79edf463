import { setImmediate as nextTurn } from "node:timers/promises";
import type { Db } from "./connection.js";
import type { VectorMeta } from "../vectors.js";
import { HammingTable } from "./hamming.js";
import { changesAfter, identityDimensions, lastChangeSeq, TurnLoop, vectorIdentity, type VectorMetaRow } from "./vector-log.js";

/** The rows a scan may return, as the vec0 scan's WHERE clause names them (vectors.ts, `filtersOf`). */
export interface MirrorFilter {
  /** The visibility column and the keys the viewpoint may see in it. */
  column: "vis_key" | "owner_key";
  keys: string[];
  nowMs: number;
  projectKey?: string;
  types?: string[];
  agentId?: string;
  confidenceMin?: number;
}

/** A change this process committed, as its transaction logged it: the row it left (null: none). */
export interface LocalChange {
  seq: number;
  pk: number;
  vector: Float32Array | null;
  meta: VectorMeta | null;
}

interface Row extends VectorMetaRow {
  pk: number;
  bits: Uint8Array;
}

const COLUMNS = "pk, bits, vis_key, owner_key, project_key, type, agent_id, confidence, expires_ms";
/** Rows read per turn of the event loop while the mirror is built (about 5 ms on this class of machine). */
const PAGE = 500;
/** Changes a scan applies itself before answering; with more pending it declines, and they are applied in the background. */
const CATCH_UP_PER_QUERY = 64;
const CATCH_UP_PER_TURN = 64;
/** Past this many vectors no mirror is kept (about 110 bytes a row): the HNSW index serves such a store. */
const MIRROR_MAX_ROWS = 200_000;
/** How long after a local commit the background catch-up looks at the log, if no scan has by then. */
const IDLE_CATCH_UP_MS = 100;
/** Local changes held for the catch-up at most: past this, it reads them back like another process's. */
const MAX_KNOWN = 4096;
/** A failed or declined build is not tried again before this. */
const RETRY_MS = 60_000;

/**
 * The vec0 table's binary-quantized vectors and filter columns, copied into this process's memory
 * and scanned there: the same candidates as vec0's bit scan (Hamming distance, every filter applied
 * before `k` counts) without reading SQLite's pages, the distances counted in WebAssembly
 * (hamming.ts). A candidate generator only: the caller ranks what it returns by exact cosine from
 * `memory_embeddings`, as it does vec0's.
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
  private dimensions = 0;
  private count = 0;
  private capacity = 0;
  /** The rows' sign bits, by slot, and the scan over them. */
  private table: HammingTable | null = null;
  private pks = new Float64Array(0);
  private visKeys = new Int32Array(0);
  private ownerKeys = new Int32Array(0);
  private projectKeys = new Int32Array(0);
  private types = new Int32Array(0);
  private agents = new Int32Array(0);
  private confidences = new Float64Array(0);
  private expiries = new Float64Array(0);
  private readonly slots = new Map<number, number>();
  /** Every string a filter column holds, as a small integer. */
  private readonly strings = new Map<string, number>();
  /** This process's committed changes by seq, not yet reached by the catch-up: applied without reading vec0. */
  private readonly known = new Map<number, Row | null>();
  private building: Promise<void> | null = null;
  private readonly catchingUp = new TurnLoop(
    () => this.closed || !this.ready || this.catchUp(CATCH_UP_PER_TURN),
    (error) => {
      this.drop();
      this.failedAt = performance.now();
      this.onError(error);
    },
  );
  private closed = false;
  private failedAt = -Infinity;

  constructor(
    /** A connection that sees only what is committed. */
    private readonly db: Db,
    private readonly onError: (error: unknown) => void,
  ) {}

  /** Resolves once the mirror is ready and current (true) or cannot be now (false). */
  async settled(): Promise<boolean> {
    for (;;) {
      this.candidates(new Float32Array(0), 0, { column: "vis_key", keys: [], nowMs: 0 });
      while (this.building) await this.building;
      if (!this.ready || this.closed) return false;
      if (this.catchUp(Infinity)) return true;
      await nextTurn();
    }
  }

  /**
   * Pks of the `k` rows passing `filter` nearest to `vector` by Hamming distance of the signs
   * (more at a tie on the last distance is never returned; which of the tied is, is arbitrary, as
   * in vec0), or null when the mirror cannot answer now.
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
      else if (vector.length === this.dimensions) this.known.set(change.seq, this.rowOf(change.pk, vector, meta));
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
      const identity = vectorIdentity(this.db);
      if (identity !== null) this.start(identity);
      return null;
    }
    if (!this.catchUp(CATCH_UP_PER_QUERY)) return null;
    if (vector.length !== this.dimensions) return null;
    if (k <= 0) return [];
    return this.nearest(vector, k, filter);
  }

  private nearest(vector: Float32Array, k: number, filter: MirrorFilter): number[] {
    const id = (value: string | undefined): number | undefined => (value === undefined ? undefined : (this.strings.get(value) ?? -1));
    const projectKey = id(filter.projectKey);
    const agent = id(filter.agentId);
    // A value no row holds matches nothing.
    if (projectKey === -1 || agent === -1) return [];
    const allowedKeys = this.lookup(filter.keys);
    const allowedTypes = filter.types === undefined ? null : this.lookup(filter.types);
    const keyColumn = filter.column === "vis_key" ? this.visKeys : this.ownerKeys;
    const { nowMs } = filter;
    const confidenceMin = filter.confidenceMin ?? -Infinity;
    const { count, projectKeys, agents, types, confidences, expiries } = this;
    const distances = (this.table as HammingTable).distances(this.quantize(vector), count);
    const FILTERED = 0xffff;
    const histogram = new Uint32Array(this.dimensions + 1);
    for (let slot = 0; slot < count; slot++) {
      if (
        allowedKeys[keyColumn[slot] as number] !== 1 ||
        (expiries[slot] as number) <= nowMs ||
        (projectKey !== undefined && projectKeys[slot] !== projectKey) ||
        (agent !== undefined && agents[slot] !== agent) ||
        (allowedTypes !== null && allowedTypes[types[slot] as number] !== 1) ||
        (confidences[slot] as number) < confidenceMin
      ) {
        distances[slot] = FILTERED;
        continue;
      }
      const distance = distances[slot] as number;
      histogram[distance] = (histogram[distance] as number) + 1;
    }
    // The distance at which the k-th nearest stands: rows nearer all come, rows at it until k.
    let cutoff = 0;
    for (let seen = 0; cutoff <= this.dimensions; cutoff++) {
      seen += histogram[cutoff] as number;
      if (seen >= k) break;
    }
    const nearer: number[] = [];
    const tied: number[] = [];
    for (let slot = 0; slot < count; slot++) {
      const distance = distances[slot] as number;
      if (distance < cutoff) nearer.push(this.pks[slot] as number);
      else if (distance === cutoff) tied.push(this.pks[slot] as number);
    }
    return [...nearer, ...tied.slice(0, k - nearer.length)];
  }

  /** A table by string id: 1 where the id is one of `values`. */
  private lookup(values: readonly string[]): Uint8Array {
    const table = new Uint8Array(this.strings.size);
    for (const value of values) {
      const at = this.strings.get(value);
      if (at !== undefined) table[at] = 1;
    }
    return table;
  }

  /** The signs of `vector` as vec0's `vec_quantize_binary` lays them out: element i is bit i % 8 of byte i / 8 (1 when above zero). */
  /** A local change as the row vec0 holds after it. */
  private rowOf(pk: number, vector: Float32Array, meta: VectorMeta): Row {
    return {
      pk,
      bits: this.quantize(vector),
      vis_key: meta.visKey,
      owner_key: meta.ownerKey,
      project_key: meta.projectKey,
      type: meta.type,
      agent_id: meta.agentId,
      confidence: meta.confidence,
      expires_ms: meta.expiresMs,
    };
  }

  private quantize(vector: Float32Array): Uint8Array {
    const bytes = new Uint8Array(Math.ceil(vector.length / 8));
    for (let index = 0; index < vector.length; index++) if ((vector[index] as number) > 0) bytes[index >> 3] = (bytes[index >> 3] as number) | (1 << (index & 7));
    return bytes;
  }

  private intern(value: string): number {
    let at = this.strings.get(value);
    if (at === undefined) {
      at = this.strings.size;
      this.strings.set(value, at);
    }
    return at;
  }

  private drop(): void {
    this.ready = false;
    this.identity = null;
    this.known.clear();
    this.reset(0);
  }

  private reset(dimensions: number): void {
    this.dimensions = dimensions;
    // A new table: WebAssembly memory cannot give back what an earlier, larger mirror took.
    this.table = dimensions === 0 ? null : new HammingTable(dimensions);
    this.count = 0;
    this.capacity = 0;
    this.slots.clear();
    this.strings.clear();
    this.grow(0);
  }

  /** Room for at least `rows` rows (every array reallocated, what is held copied over). */
  private grow(rows: number): void {
    const capacity = rows === 0 ? 0 : Math.max(1024, rows, Math.ceil(this.capacity * 1.5));
    const widen = <T extends Int32Array | Float64Array>(old: T, make: (length: number) => T): T => {
      const next = make(capacity);
      next.set(old.subarray(0, Math.min(old.length, next.length)));
      return next;
    };
    this.table?.grow(capacity);
    this.pks = widen(this.pks, (length) => new Float64Array(length));
    this.visKeys = widen(this.visKeys, (length) => new Int32Array(length));
    this.ownerKeys = widen(this.ownerKeys, (length) => new Int32Array(length));
    this.projectKeys = widen(this.projectKeys, (length) => new Int32Array(length));
    this.types = widen(this.types, (length) => new Int32Array(length));
    this.agents = widen(this.agents, (length) => new Int32Array(length));
    this.confidences = widen(this.confidences, (length) => new Float64Array(length));
    this.expiries = widen(this.expiries, (length) => new Float64Array(length));
    this.capacity = capacity;
  }

  private upsert(row: Row): void {
    let slot = this.slots.get(row.pk);
    if (slot === undefined) {
      if (this.count === this.capacity) this.grow(this.count + 1);
      slot = this.count++;
      this.slots.set(row.pk, slot);
      this.pks[slot] = row.pk;
    }
    (this.table as HammingTable).set(slot, row.bits);
    this.visKeys[slot] = this.intern(row.vis_key);
    this.ownerKeys[slot] = this.intern(row.owner_key);
    this.projectKeys[slot] = this.intern(row.project_key);
    this.types[slot] = this.intern(row.type);
    this.agents[slot] = this.intern(row.agent_id);
    this.confidences[slot] = row.confidence;
    this.expiries[slot] = row.expires_ms;
  }

  /** Removes a row by moving the last one into its slot. */
  private remove(pk: number): void {
    const slot = this.slots.get(pk);
    if (slot === undefined) return;
    this.slots.delete(pk);
    const last = --this.count;
    if (slot === last) return;
    const movedPk = this.pks[last] as number;
    this.slots.set(movedPk, slot);
    this.pks[slot] = movedPk;
    (this.table as HammingTable).copy(last, slot);
    for (const column of [this.visKeys, this.ownerKeys, this.projectKeys, this.types, this.agents, this.confidences, this.expiries]) column[slot] = column[last] as number;
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
    if (count > MIRROR_MAX_ROWS) return;
    this.reset(identityDimensions(identity));
    const seq = lastChangeSeq(this.db);
    let after = 0;
    for (;;) {
      if (this.closed || vectorIdentity(this.db) !== identity || this.count > MIRROR_MAX_ROWS) {
        this.reset(0);
        return;
      }
      const rows = this.db.all<Row>(`SELECT ${COLUMNS} FROM memory_vectors WHERE pk > ? ORDER BY pk LIMIT ?`, BigInt(after), PAGE);
      for (const row of rows) this.upsert(row);
      if (rows.length < PAGE) break;
      after = (rows.at(-1) as Row).pk;
      await nextTurn();
    }
    this.seq = seq;
    this.identity = identity;
    this.ready = true;
    this.scheduleCatchUp();
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
    const readBack = new Set<number>();
    for (const { seq, pk } of changes) {
      const local = this.known.get(seq);
      this.known.delete(seq);
      if (local !== undefined && (local === null || local.pk === pk)) {
        if (local) this.upsert(local);
        else this.remove(pk);
        continue;
      }
      if (readBack.has(pk)) continue;
      readBack.add(pk);
      const row = this.db.get<Row>(`SELECT ${COLUMNS} FROM memory_vectors WHERE pk = ?`, BigInt(pk));
      if (row) this.upsert(row);
      else this.remove(pk);
    }
    this.seq = (changes.at(-1) as { seq: number }).seq;
    if (this.count > MIRROR_MAX_ROWS) this.drop();
    return this.ready;
  }

  /** Applies the log in the background, a slice per turn of the event loop, until current. */
  private scheduleCatchUp(afterMs = 0): void {
    this.catchingUp.start(afterMs);
  }
}
