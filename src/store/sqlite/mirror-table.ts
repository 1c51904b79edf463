import { listsFor, MirrorLists, trainCentroids } from "./mirror-lists.js";
import { RowTable } from "./row-scan.js";
import { SurveyTable, type SurveyFilter } from "./survey-table.js";
import type { VectorMetaRow } from "./vector-log.js";

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
  /**
   * The nearest lists of the rows' partition may answer instead of every row (`Partitioning`):
   * nearly the same neighbours for a fraction of the scan. A full scan answers when the rows are
   * not partitioned, or fewer than asked pass the filter in those lists.
   */
  coarse?: boolean;
}

/** A vec0 row as the mirror holds it: its sign bits, its filter columns and its embedding. */
export interface MirrorRow extends VectorMetaRow {
  pk: number;
  bits: Uint8Array;
  /** The float32 embedding (a blob of `memory_embeddings`, or the vector itself); null: none stored. */
  embedding: Uint8Array | Float32Array | null;
}

/** How many rows the bit scan shortlists for the int8 ranking: the larger of these two. */
export interface Shortlist {
  /** Rows shortlisted per candidate returned. */
  perCandidate: number;
  /** One row shortlisted per this many held: the bit scan's ranking grows noisier with the store. */
  rowsPerShortlisted: number;
}

export const SHORTLIST: Shortlist = { perCandidate: 4, rowsPerShortlisted: 100 };

/** When the rows are partitioned into lists (mirror-lists.ts), and how many of them a coarse scan reads. */
export interface Partitioning {
  /** Rows from which they are: below, a full scan costs a coarse one's price or little more. */
  fromRows: number;
  /** A coarse scan reads the lists nearest to the query: at least this many, */
  minProbed: number;
  /** and at least one list in this many. */
  listsPerProbed: number;
}

/**
 * 16 of 316 lists at 100,000 rows of the write benchmark's notes: 97 % of each query's 8 nearest
 * rows (by exact cosine) were in them, and every row at 0.95 or more, for 6 % of the rows scanned.
 */
export const PARTITIONING: Partitioning = { fromRows: 20_000, minProbed: 16, listsPerProbed: 16 };
/** Rows put in their lists between two turns of the event loop while a partition is filled. */
const FILL_SLICE = 2000;

/** The signs of `vector` as vec0's `vec_quantize_binary` lays them out: element i is bit i % 8 of byte i / 8 (1 when above zero). */
export function signBits(vector: Float32Array): Uint8Array {
  const bytes = new Uint8Array(Math.ceil(vector.length / 8));
  for (let index = 0; index < vector.length; index++) if ((vector[index] as number) > 0) bytes[index >> 3] = (bytes[index >> 3] as number) | (1 << (index & 7));
  return bytes;
}

/** `vector` scaled so its largest component is ±127 and rounded, with the length of the result. */
export function int8Of(vector: Float32Array): { components: Int8Array; norm: number } {
  let largest = 0;
  for (const value of vector) largest = Math.max(largest, Math.abs(value));
  const components = new Int8Array(vector.length);
  if (largest === 0 || !Number.isFinite(largest)) return { components, norm: 0 };
  const scale = 127 / largest;
  let squares = 0;
  for (let index = 0; index < vector.length; index++) {
    const component = Math.round((vector[index] as number) * scale);
    components[index] = component;
    squares += component * component;
  }
  return { components, norm: Math.sqrt(squares) };
}

/** A blob's floats, read in place when they are aligned (copied when not). */
const asFloats = (embedding: Uint8Array | Float32Array): Float32Array => {
  if (embedding instanceof Float32Array) return embedding;
  const length = embedding.byteLength >> 2;
  return embedding.byteOffset % 4 === 0 ? new Float32Array(embedding.buffer, embedding.byteOffset, length) : new Float32Array(embedding.buffer.slice(embedding.byteOffset, embedding.byteOffset + 4 * length));
};

/**
 * The vec0 table's rows in this process's memory, by slot: sign bits with the filter columns
 * (strings as small integers) in one WebAssembly memory (survey-table.ts), int8 components in
 * another (row-scan.ts). A scan is two stages: the bit scan (Hamming distance, every filter
 * applied before counting) shortlists the nearest rows, and the int8 components' cosine picks the
 * candidates among them.
 */
export class MirrorTable {
  count = 0;
  private capacity = 0;
  private readonly bits: SurveyTable;
  private readonly components: RowTable;
  private norms = new Float64Array(0);
  private pks = new Float64Array(0);
  private readonly slots = new Map<number, number>();
  /** Every string a filter column holds, as a small integer. */
  private readonly strings = new Map<string, number>();
  /** The partition coarse scans read; null until one is trained and filled. */
  private lists: MirrorLists | null = null;
  /** A partition being filled: rows below `cursor` are in their lists. */
  private filling: { lists: MirrorLists; cursor: number } | null = null;
  private partitioning = false;

  constructor(
    readonly dimensions: number,
    private readonly shortlist: Shortlist = SHORTLIST,
    private readonly partitions: Partitioning = PARTITIONING,
  ) {
    this.bits = new SurveyTable(dimensions);
    this.components = new RowTable(dimensions);
  }

  upsert(row: MirrorRow): void {
    let slot = this.slots.get(row.pk);
    if (slot === undefined) {
      if (this.count === this.capacity) this.grow(this.count + 1);
      slot = this.count++;
      this.slots.set(row.pk, slot);
      this.pks[slot] = row.pk;
    }
    const columns = {
      visKey: this.intern(row.vis_key),
      ownerKey: this.intern(row.owner_key),
      projectKey: this.intern(row.project_key),
      type: this.intern(row.type),
      agent: this.intern(row.agent_id),
      confidence: row.confidence,
      expiresMs: row.expires_ms,
    };
    this.bits.set(slot, row.bits, columns);
    const { components, norm } = row.embedding ? int8Of(asFloats(row.embedding)) : { components: new Int8Array(0), norm: 0 };
    this.components.set(slot, components);
    this.norms[slot] = norm;
    this.lists?.assign(slot, row.bits, columns);
    if (this.filling && slot < this.filling.cursor) this.filling.lists.assign(slot, row.bits, columns);
  }

  /** Removes a row by moving the last one into its slot. */
  remove(pk: number): void {
    const slot = this.slots.get(pk);
    if (slot === undefined) return;
    this.slots.delete(pk);
    const last = --this.count;
    this.lists?.remove(slot);
    this.filling?.lists.remove(slot);
    if (slot === last) return;
    const movedPk = this.pks[last] as number;
    this.slots.set(movedPk, slot);
    this.pks[slot] = movedPk;
    this.bits.copy(last, slot);
    this.components.copy(last, slot);
    this.norms[slot] = this.norms[last] as number;
    this.lists?.move(last, slot);
    const { filling } = this;
    if (filling) {
      filling.lists.move(last, slot);
      // A row the filling had not reached, moved below its cursor: it would never reach it.
      if (slot < filling.cursor && filling.lists.listAt(slot) < 0) filling.lists.assign(slot, this.bits.bitsOf(slot), this.bits.columnsOf(slot));
    }
  }

  /** Lists the rows are partitioned into; 0 while they are not. */
  get listCount(): number {
    return this.lists?.size ?? 0;
  }

  /** Whether the rows should be partitioned (again): past `fromRows`, and never yet, or at double or half the rows the lists were trained at. */
  get partitionDue(): boolean {
    if (this.partitioning || this.count < this.partitions.fromRows) return false;
    const trainedAt = this.lists?.trainedAt;
    return trainedAt === undefined || this.count >= 2 * trainedAt || 2 * this.count <= trainedAt;
  }

  /**
   * Trains a partition on a sample of the rows and puts every row in its list, with a turn of the
   * event loop (`pause`) every slice, while writes go on; then coarse scans read it. False when
   * `pause` resolved false.
   */
  async partition(pause: () => Promise<boolean>): Promise<boolean> {
    this.partitioning = true;
    try {
      const count = this.count;
      const centroids = await trainCentroids(this.dimensions, (slot) => this.bits.bitsOf(slot), count, listsFor(count), pause);
      if (!centroids) return false;
      const filling = { lists: new MirrorLists(this.dimensions, centroids, count), cursor: 0 };
      this.filling = filling;
      while (filling.cursor < this.count) {
        filling.lists.assign(filling.cursor, this.bits.bitsOf(filling.cursor), this.bits.columnsOf(filling.cursor));
        filling.cursor++;
        if (filling.cursor % FILL_SLICE === 0 && !(await pause())) return false;
      }
      this.lists = filling.lists;
      return true;
    } finally {
      this.filling = null;
      this.partitioning = false;
    }
  }

  /**
   * Pks of `k` rows passing `filter` near `vector`: the rows nearest by Hamming distance of the
   * signs are shortlisted (more at a tie on the last distance are never taken; which of the tied
   * is, is arbitrary, as in vec0), and of those the `k` nearest by the int8 components' cosine
   * are returned, in no particular order.
   */
  nearest(vector: Float32Array, k: number, filter: MirrorFilter): number[] {
    const bits = signBits(vector);
    const size = (rows: number): number => Math.max(k * this.shortlist.perCandidate, Math.ceil(rows / this.shortlist.rowsPerShortlisted));
    const survey = this.surveyFilter(filter);
    if (!survey) return [];
    let shortlisted: Int32Array | null = null;
    const { lists } = this;
    if (filter.coarse && lists) {
      const probed = Math.max(this.partitions.minProbed, Math.ceil(lists.size / this.partitions.listsPerProbed));
      const found = lists.nearest(bits, probed, survey, size(Math.ceil((this.count * probed) / lists.size)));
      // Fewer than asked in the nearest lists: a selective filter, which a full scan answers.
      if (found.length >= k) shortlisted = found;
    }
    shortlisted ??= size(this.count) > 0 ? this.bits.survey(bits, this.count, survey, size(this.count)).slots : new Int32Array(0);
    if (shortlisted.length === 0) return [];
    const query = int8Of(vector);
    const dots = this.components.dots(query.components, shortlisted);
    const similarity = new Float64Array(shortlisted.length);
    for (let at = 0; at < shortlisted.length; at++) {
      const norm = (this.norms[shortlisted[at] as number] as number) * query.norm;
      // A row without an embedding (or a zero one) ranks below every cosine.
      similarity[at] = norm === 0 ? -2 : (dots[at] as number) / norm;
    }
    if (shortlisted.length <= k) return Array.from(shortlisted, (slot) => this.pks[slot] as number);
    // The k-th highest similarity: rows above it all come, rows at it until k.
    const least = similarity.slice().sort()[shortlisted.length - k] as number;
    const above: number[] = [];
    const at: number[] = [];
    for (let index = 0; index < shortlisted.length; index++) {
      const value = similarity[index] as number;
      if (value > least) above.push(this.pks[shortlisted[index] as number] as number);
      else if (value === least) at.push(this.pks[shortlisted[index] as number] as number);
    }
    return [...above, ...at.slice(0, k - above.length)];
  }

  /** `filter` in the survey's terms (strings as their ids); null when it matches no row. */
  private surveyFilter(filter: MirrorFilter): SurveyFilter | null {
    const id = (value: string | undefined): number | undefined => (value === undefined ? undefined : (this.strings.get(value) ?? -1));
    const projectKey = id(filter.projectKey);
    const agent = id(filter.agentId);
    // A value no row holds matches nothing.
    if (projectKey === -1 || agent === -1) return null;
    return {
      keyColumn: filter.column === "vis_key" ? "visKey" : "ownerKey",
      allowedKeys: this.lookup(filter.keys),
      nowMs: filter.nowMs,
      projectKey: projectKey ?? -1,
      agent: agent ?? -1,
      allowedTypes: filter.types === undefined ? null : this.lookup(filter.types),
      confidenceMin: filter.confidenceMin ?? -Infinity,
    };
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

  private intern(value: string): number {
    let at = this.strings.get(value);
    if (at === undefined) {
      at = this.strings.size;
      this.strings.set(value, at);
    }
    return at;
  }

  /** Room for at least `rows` rows (every column reallocated, what is held copied over). */
  private grow(rows: number): void {
    const capacity = Math.max(1024, rows, Math.ceil(this.capacity * 1.5));
    const widen = (old: Float64Array): Float64Array<ArrayBuffer> => {
      const next = new Float64Array(capacity);
      next.set(old.subarray(0, Math.min(old.length, next.length)));
      return next;
    };
    this.bits.grow(capacity);
    this.components.grow(capacity);
    this.norms = widen(this.norms);
    this.pks = widen(this.pks);
    this.capacity = capacity;
  }
}
