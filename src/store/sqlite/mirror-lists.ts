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

export class MirrorLists {
  private readonly centroids: SurveyTable;
  private readonly members: Int32Array[];
  private readonly lengths: Int32Array;
  /** By slot: its list (-1: in none) and its place there. */
  private listOf = new Int32Array(0);
  private placeOf = new Int32Array(0);

  constructor(
    dimensions: number,
    centroidBits: readonly Uint8Array[],
    /** The row count the centroids were trained at: a store that doubles or halves is partitioned again. */
    readonly trainedAt: number,
  ) {
    this.centroids = new SurveyTable(dimensions);
    this.centroids.grow(centroidBits.length);
    centroidBits.forEach((bits, list) => this.centroids.set(list, bits, CENTROID));
    this.members = centroidBits.map(() => new Int32Array(16));
    this.lengths = new Int32Array(centroidBits.length);
  }

  get size(): number {
    return this.members.length;
  }

  /** The list `slot` is in, -1 when none. */
  listAt(slot: number): number {
    return slot < this.listOf.length ? (this.listOf[slot] as number) : -1;
  }

  /** The list whose centroid is nearest to `bits`. */
  nearestList(bits: Uint8Array): number {
    return nearestOf(this.centroids, this.size, bits);
  }

  /** Puts row `slot` (its bits `bits`) in the list of its nearest centroid, out of any it was in. */
  assign(slot: number, bits: Uint8Array): void {
    this.remove(slot);
    const list = this.nearestList(bits);
    this.room(slot + 1);
    let members = this.members[list] as Int32Array;
    const length = this.lengths[list] as number;
    if (length === members.length) {
      const wider = new Int32Array(members.length * 2);
      wider.set(members);
      this.members[list] = members = wider;
    }
    members[length] = slot;
    this.lengths[list] = length + 1;
    this.listOf[slot] = list;
    this.placeOf[slot] = length;
  }

  /** Takes row `slot` out of its list (the list's last row takes its place there). */
  remove(slot: number): void {
    const list = this.listAt(slot);
    if (list < 0) return;
    const members = this.members[list] as Int32Array;
    const last = (this.lengths[list] as number) - 1;
    const place = this.placeOf[slot] as number;
    const moved = members[last] as number;
    members[place] = moved;
    this.placeOf[moved] = place;
    this.lengths[list] = last;
    this.listOf[slot] = -1;
  }

  /** Row `from` now lives at slot `to` (which is in no list). */
  move(from: number, to: number): void {
    const list = this.listAt(from);
    if (list < 0) return;
    this.room(to + 1);
    const place = this.placeOf[from] as number;
    (this.members[list] as Int32Array)[place] = to;
    this.listOf[to] = list;
    this.placeOf[to] = place;
    this.listOf[from] = -1;
  }

  private room(slots: number): void {
    if (slots <= this.listOf.length) return;
    const capacity = Math.max(1024, slots, Math.ceil(this.listOf.length * 1.5));
    const listOf = new Int32Array(capacity).fill(-1);
    listOf.set(this.listOf);
    const placeOf = new Int32Array(capacity);
    placeOf.set(this.placeOf);
    this.listOf = listOf;
    this.placeOf = placeOf;
  }

  /** The rows of the `lists` lists whose centroids are nearest to `bits`. */
  probe(bits: Uint8Array, lists: number): Int32Array {
    const nearest = Array.from(this.centroids.survey(bits, this.size, EVERY, Math.min(lists, this.size)).slots);
    let total = 0;
    for (const list of nearest) total += this.lengths[list] as number;
    const rows = new Int32Array(total);
    let at = 0;
    for (const list of nearest) {
      const length = this.lengths[list] as number;
      rows.set((this.members[list] as Int32Array).subarray(0, length), at);
      at += length;
    }
    return rows;
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
