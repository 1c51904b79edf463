import { SurveyTable, type SurveyColumns, type SurveyFilter } from "./survey-table.js";

// A partition of the bit mirror's rows into lists by their nearest centroid (Hamming distance of
// the sign bits), so that a query may scan only the lists whose centroids are nearest to it: an
// inverted file over the mirror (mirror-table.ts). Centroids are trained on a sample (k-modes:
// each centroid's bit is its list's majority), and rows join the list of their nearest centroid
// as they are written.

/** Every centroid passes: they all hold key 0 and never expire. */
const EVERY: SurveyFilter = { keyColumn: "visKey", allowedKeys: Uint8Array.of(1), nowMs: 0, projectKey: -1, agent: -1, allowedTypes: null, confidenceMin: -Infinity };
const CENTROID: SurveyColumns = { visKey: 0, ownerKey: 0, projectKey: 0, type: 0, agent: 0, confidence: 0, expiresMs: Infinity };

/** Sample rows a centroid is trained on; rounds of training. */
const SAMPLE_PER_LIST = 30;
const ROUNDS = 6;
/** Sample rows assigned between two turns of the event loop while training (a few ms). */
const TRAIN_SLICE = 1000;

/** Which of the first `count` centroids is nearest to `bits`. */
const nearestOf = (centroids: SurveyTable, count: number, bits: Uint8Array): number => centroids.survey(bits, count, EVERY, 1).slots[0] ?? 0;

/** Lists for a store of `rows` rows: about its square root, so lists and their lengths grow alike. */
export const listsFor = (rows: number): number => Math.max(1, Math.round(Math.sqrt(rows)));

/** A list's first room, in rows, against the rows a list holds on average when trained: a few relocate as they grow. */
const ROOM_OVER_AVERAGE = 1.25;
const MIN_ROOM = 16;

/**
 * The lists, with a second copy of their rows' bits and filter columns grouped by list: a coarse
 * scan reads each list's rows one after another rather than scattered over the table (a cache
 * miss or more a row). Each list has a region of room in the copy; a full one moves to the end
 * with twice the room, leaving its old region unused until the next partition (at most about as
 * much again as the rows held).
 */
export class MirrorLists {
  private readonly centroids: SurveyTable;
  private readonly grouped: SurveyTable;
  private groupedRoom = 0;
  /** Past every list's region: where the next region starts. */
  private end = 0;
  private readonly starts: Int32Array;
  private readonly rooms: Int32Array;
  private readonly lengths: Int32Array;
  /** By position in the copy: the table's slot there. */
  private slotAt = new Int32Array(0);
  /** By slot: its list (-1: in none) and its position in the copy. */
  private listOf = new Int32Array(0);
  private positionOf = new Int32Array(0);

  constructor(
    dimensions: number,
    centroidBits: readonly Uint8Array[],
    /** The row count the centroids were trained at: a store that doubles or halves is partitioned again. */
    readonly trainedAt: number,
  ) {
    this.centroids = new SurveyTable(dimensions);
    this.centroids.grow(centroidBits.length);
    centroidBits.forEach((bits, list) => this.centroids.set(list, bits, CENTROID));
    this.grouped = new SurveyTable(dimensions);
    const lists = centroidBits.length;
    this.starts = new Int32Array(lists);
    this.rooms = new Int32Array(lists);
    this.lengths = new Int32Array(lists);
    const room = Math.max(MIN_ROOM, Math.ceil((ROOM_OVER_AVERAGE * trainedAt) / lists));
    this.reserve(room * lists);
    for (let list = 0; list < lists; list++) {
      this.starts[list] = this.end;
      this.rooms[list] = room;
      this.end += room;
    }
  }

  get size(): number {
    return this.lengths.length;
  }

  /** The list `slot` is in, -1 when none. */
  listAt(slot: number): number {
    return slot < this.listOf.length ? (this.listOf[slot] as number) : -1;
  }

  /** The list whose centroid is nearest to `bits`. */
  nearestList(bits: Uint8Array): number {
    return nearestOf(this.centroids, this.size, bits);
  }

  /** Puts row `slot` (its bits and columns) in the list of its nearest centroid, out of any it was in. */
  assign(slot: number, bits: Uint8Array, columns: SurveyColumns): void {
    this.remove(slot);
    const list = this.nearestList(bits);
    if (this.lengths[list] === this.rooms[list]) this.relocate(list);
    const position = (this.starts[list] as number) + (this.lengths[list] as number);
    this.grouped.set(position, bits, columns);
    this.lengths[list] = (this.lengths[list] as number) + 1;
    this.place(slot, list, position);
  }

  /** Takes row `slot` out of its list (the list's last row takes its place there). */
  remove(slot: number): void {
    const list = this.listAt(slot);
    if (list < 0) return;
    const position = this.positionOf[slot] as number;
    const last = (this.starts[list] as number) + (this.lengths[list] as number) - 1;
    if (position !== last) {
      this.grouped.copy(last, position);
      const moved = this.slotAt[last] as number;
      this.slotAt[position] = moved;
      this.positionOf[moved] = position;
    }
    this.lengths[list] = (this.lengths[list] as number) - 1;
    this.listOf[slot] = -1;
  }

  /** Row `from` now lives at slot `to` (which is in no list). */
  move(from: number, to: number): void {
    const list = this.listAt(from);
    if (list < 0) return;
    this.place(to, list, this.positionOf[from] as number);
    this.listOf[from] = -1;
  }

  /**
   * The table's slots of the `size` rows passing `filter` nearest to `bits` by Hamming distance,
   * among the rows of the `lists` lists whose centroids are nearest to `bits`.
   */
  nearest(bits: Uint8Array, lists: number, filter: SurveyFilter, size: number): Int32Array {
    const nearest = Array.from(this.centroids.survey(bits, this.size, EVERY, Math.min(lists, this.size)).slots);
    let total = 0;
    for (const list of nearest) total += this.lengths[list] as number;
    const positions = new Int32Array(total);
    let at = 0;
    for (const list of nearest) {
      const start = this.starts[list] as number;
      const end = start + (this.lengths[list] as number);
      for (let position = start; position < end; position++) positions[at++] = position;
    }
    const found = this.grouped.survey(bits, this.end, filter, size, positions).slots;
    return Int32Array.from(found, (position) => this.slotAt[position] as number);
  }

  private place(slot: number, list: number, position: number): void {
    if (slot >= this.listOf.length) {
      const capacity = Math.max(1024, slot + 1, Math.ceil(this.listOf.length * 1.5));
      const listOf = new Int32Array(capacity).fill(-1);
      listOf.set(this.listOf);
      const positionOf = new Int32Array(capacity);
      positionOf.set(this.positionOf);
      this.listOf = listOf;
      this.positionOf = positionOf;
    }
    this.listOf[slot] = list;
    this.positionOf[slot] = position;
    this.slotAt[position] = slot;
  }

  /** Moves a full list to a region at the end with twice its room. */
  private relocate(list: number): void {
    const room = Math.max(MIN_ROOM, 2 * (this.rooms[list] as number));
    this.reserve(this.end + room);
    const from = this.starts[list] as number;
    const length = this.lengths[list] as number;
    for (let offset = 0; offset < length; offset++) {
      this.grouped.copy(from + offset, this.end + offset);
      const slot = this.slotAt[from + offset] as number;
      this.slotAt[this.end + offset] = slot;
      this.positionOf[slot] = this.end + offset;
    }
    this.starts[list] = this.end;
    this.rooms[list] = room;
    this.end += room;
  }

  /** Room in the copy for `positions` rows. */
  private reserve(positions: number): void {
    if (positions <= this.groupedRoom) return;
    const room = Math.max(positions, Math.ceil(this.groupedRoom * 1.5));
    this.grouped.grow(room);
    const slotAt = new Int32Array(room);
    slotAt.set(this.slotAt);
    this.slotAt = slotAt;
    this.groupedRoom = room;
  }
}

/**
 * Centroids for `lists` lists, trained on an even sample of the first `count` rows (`rowBits`
 * gives a copy of a row's bits, taken before the first pause): k-modes from sample rows as seeds,
 * with a turn of the event loop (`pause`) every slice; null once `pause` resolves false.
 */
export async function trainCentroids(
  dimensions: number,
  rowBits: (slot: number) => Uint8Array,
  count: number,
  lists: number,
  pause: () => Promise<boolean>,
): Promise<Uint8Array[] | null> {
  const size = Math.min(count, lists * SAMPLE_PER_LIST);
  const sample = Array.from({ length: size }, (_, at) => rowBits(Math.floor(((at + 0.5) * count) / size)));
  // Seeds spread over the sample, so over the store's rows from first to last.
  let centroids = Array.from({ length: lists }, (_, list) => (sample[Math.floor((list * size) / lists)] as Uint8Array).slice());
  const table = new SurveyTable(dimensions);
  table.grow(lists);
  for (let round = 0; round < ROUNDS; round++) {
    centroids.forEach((bits, list) => table.set(list, bits, CENTROID));
    const ones = new Uint32Array(lists * dimensions);
    const sizes = new Uint32Array(lists);
    for (let at = 0; at < sample.length; at++) {
      if (at % TRAIN_SLICE === TRAIN_SLICE - 1 && !(await pause())) return null;
      const bits = sample[at] as Uint8Array;
      const list = nearestOf(table, lists, bits);
      sizes[list] = (sizes[list] as number) + 1;
      const base = list * dimensions;
      for (let bit = 0; bit < dimensions; bit++) if (((bits[bit >> 3] as number) >> (bit & 7)) & 1) ones[base + bit] = (ones[base + bit] as number) + 1;
    }
    centroids = centroids.map((old, list) => {
      const members = sizes[list] as number;
      // A list no sample row chose keeps its centroid: it may still suit rows written later.
      if (members === 0) return old;
      const bits = new Uint8Array(old.length);
      const base = list * dimensions;
      for (let bit = 0; bit < dimensions; bit++) if ((ones[base + bit] as number) * 2 > members) bits[bit >> 3] = (bits[bit >> 3] as number) | (1 << (bit & 7));
      return bits;
    });
  }
  return centroids;
}
