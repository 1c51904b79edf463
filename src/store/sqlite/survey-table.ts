import { CHUNK, reserveMemory, rowScanInstance, writeRow, type RowScanExports } from "./row-scan.js";

/** A row's filter columns: strings as the small integers the mirror interns them to. */
export interface SurveyColumns {
  visKey: number;
  ownerKey: number;
  projectKey: number;
  type: number;
  agent: number;
  confidence: number;
  expiresMs: number;
}

/** What a survey lets through, in interned ids: a row passes when every condition asked holds. */
export interface SurveyFilter {
  /** Which key column the viewpoint is checked against, and the ids it may see there (1 at an allowed id). */
  keyColumn: "visKey" | "ownerKey";
  allowedKeys: Uint8Array;
  nowMs: number;
  /** -1: any. */
  projectKey: number;
  /** -1: any. */
  agent: number;
  /** null: any type. */
  allowedTypes: Uint8Array | null;
  confidenceMin: number;
}

const INT_COLUMNS = ["visKey", "ownerKey", "projectKey", "type", "agent"] as const;
const FLOAT_COLUMNS = ["confidence", "expiresMs"] as const;
type IntColumn = (typeof INT_COLUMNS)[number];
type FloatColumn = (typeof FLOAT_COLUMNS)[number];

const aligned = (bytes: number): number => Math.ceil(bytes / CHUNK) * CHUNK;

/** Where each region starts for `capacity` rows: the query, the rows, then one region a column; scratch after `end`. */
function layout(stride: number, capacity: number): { rows: number; columns: Record<IntColumn | FloatColumn, number>; end: number } {
  let at = stride + stride * capacity;
  const columns = {} as Record<IntColumn | FloatColumn, number>;
  for (const name of INT_COLUMNS) {
    columns[name] = at;
    at += aligned(4 * capacity);
  }
  for (const name of FLOAT_COLUMNS) {
    columns[name] = at;
    at += aligned(8 * capacity);
  }
  return { rows: stride, columns, end: at };
}

/**
 * Rows of sign bits with their filter columns, all in one WebAssembly memory, so that a survey
 * (row-scan.wat's `survey`) checks each row's filters and counts the Hamming distance of those
 * that pass in one pass, and `select` picks the shortlist: no loop over the rows runs in
 * JavaScript. At 100,000 rows the filters in JavaScript took about as long as the count.
 *
 * Memory: the query's row, the rows, a region per column, then scratch for a survey. Growing
 * moves the columns up to make room (WebAssembly memory cannot shrink: a smaller table is a new one).
 */
export class SurveyTable {
  /** Bytes a row takes: its bits, then zeros up to a whole chunk. */
  readonly stride: number;
  private readonly chunks: number;
  private readonly exports: RowScanExports;
  private capacity = 0;
  private regions = layout(0, 0);
  private bytes: Uint8Array;
  private ints = {} as Record<IntColumn, Int32Array>;
  private floats = {} as Record<FloatColumn, Float64Array>;

  constructor(readonly dimensions: number) {
    this.chunks = Math.max(1, Math.ceil(Math.ceil(dimensions / 8) / CHUNK));
    this.stride = this.chunks * CHUNK;
    this.exports = rowScanInstance();
    this.bytes = new Uint8Array(this.exports.memory.buffer);
    this.regions = layout(this.stride, 0);
    this.views();
  }

  /** Room for `rows` rows; those held keep their bits and columns. */
  grow(rows: number): void {
    if (rows <= this.capacity) return;
    const before = this.regions;
    const after = layout(this.stride, rows);
    this.reserve(after.end);
    // Every region moves up (or stays): moved last first, none is written over before it moved.
    const names = [...INT_COLUMNS, ...FLOAT_COLUMNS].reverse();
    for (const name of names) {
      const width = (INT_COLUMNS as readonly string[]).includes(name) ? 4 : 8;
      this.bytes.copyWithin(after.columns[name], before.columns[name], before.columns[name] + width * this.capacity);
    }
    this.capacity = rows;
    this.regions = after;
    this.views();
  }

  /** Row `slot`'s bits (a shorter row is padded with zeros) and columns. */
  set(slot: number, bits: Uint8Array, columns: SurveyColumns): void {
    this.setBits(slot, bits);
    for (const name of INT_COLUMNS) this.ints[name][slot] = columns[name];
    for (const name of FLOAT_COLUMNS) this.floats[name][slot] = columns[name];
  }

  /** Row `from`'s bits and columns copied over row `to`'s. */
  copy(from: number, to: number): void {
    const at = this.rowAt(from);
    this.bytes.copyWithin(this.rowAt(to), at, at + this.stride);
    for (const name of INT_COLUMNS) this.ints[name][to] = this.ints[name][from] as number;
    for (const name of FLOAT_COLUMNS) this.floats[name][to] = this.floats[name][from] as number;
  }

  /**
   * The rows that pass `filter`, nearest to `query` by Hamming distance: at most `size` of them,
   * all nearer than the last one's distance, then rows at it (which of those is arbitrary) until
   * full. The rows looked at are the first `count`, or those `listed` (count is then its length).
   * With them, the distance of each row looked at, in the order looked at (0xffff: filtered out).
   * Both arrays are this table's scratch: valid until the next survey or `grow`.
   */
  survey(query: Uint8Array, count: number, filter: SurveyFilter, size: number, listed?: Int32Array): { slots: Int32Array; distances: Uint16Array } {
    const { dimensions } = this;
    const scanned = listed ? listed.length : count;
    const listedAt = this.regions.end;
    const distancesAt = listedAt + (listed ? aligned(4 * scanned) : 0);
    const histogramAt = distancesAt + aligned(2 * scanned);
    const allowedAt = histogramAt + aligned(4 * (dimensions + 1));
    const typesAt = allowedAt + aligned(filter.allowedKeys.length);
    const slotsAt = typesAt + aligned(filter.allowedTypes?.length ?? 0);
    this.reserve(slotsAt + 4 * Math.max(0, Math.min(size, scanned)));
    this.setBits(-1, query);
    if (listed) new Int32Array(this.exports.memory.buffer, listedAt, scanned).set(listed);
    const histogram = new Uint32Array(this.exports.memory.buffer, histogramAt, dimensions + 1).fill(0);
    this.bytes.set(filter.allowedKeys, allowedAt);
    if (filter.allowedTypes) this.bytes.set(filter.allowedTypes, typesAt);
    const { columns } = this.regions;
    const passing =
      scanned === 0
        ? 0
        : this.exports.survey(
            this.rowAt(-1),
            this.rowAt(0),
            this.chunks,
            scanned,
            distancesAt,
            columns[filter.keyColumn],
            allowedAt,
            columns.expiresMs,
            filter.nowMs,
            columns.projectKey,
            filter.projectKey,
            columns.agent,
            filter.agent,
            columns.type,
            filter.allowedTypes ? typesAt : -1,
            columns.confidence,
            filter.confidenceMin,
            histogramAt,
            listed ? listedAt : -1,
          );
    const distances = new Uint16Array(this.exports.memory.buffer, distancesAt, scanned);
    const taken = Math.max(0, Math.min(size, passing));
    // The distance at which the last shortlisted stands: rows nearer all come, rows at it until full.
    let cutoff = 0;
    let nearer = 0;
    for (let seen = 0; cutoff <= dimensions; cutoff++) {
      const here = histogram[cutoff] as number;
      if (seen + here >= taken) break;
      seen += here;
      nearer = seen;
    }
    if (taken > 0) this.exports.select(distancesAt, scanned, cutoff, slotsAt, nearer, taken);
    const picked = new Int32Array(this.exports.memory.buffer, slotsAt, taken);
    // Places in the list, made rows.
    if (listed) for (let at = 0; at < taken; at++) picked[at] = listed[picked[at] as number] as number;
    return { slots: picked, distances };
  }

  /** Row `slot`'s bits (a copy). */
  bitsOf(slot: number): Uint8Array {
    const at = this.rowAt(slot);
    return this.bytes.slice(at, at + this.stride);
  }

  /** Row `slot`'s filter columns. */
  columnsOf(slot: number): SurveyColumns {
    const { ints, floats } = this;
    return {
      visKey: ints.visKey[slot] as number,
      ownerKey: ints.ownerKey[slot] as number,
      projectKey: ints.projectKey[slot] as number,
      type: ints.type[slot] as number,
      agent: ints.agent[slot] as number,
      confidence: floats.confidence[slot] as number,
      expiresMs: floats.expiresMs[slot] as number,
    };
  }

  private setBits(slot: number, bits: Uint8Array): void {
    writeRow(this.bytes, this.rowAt(slot), this.stride, bits);
  }

  /** Memory up to `end` bytes; growing it never moves what is there, but detaches the views. */
  private reserve(end: number): void {
    if (reserveMemory(this.exports.memory, end)) this.views();
  }

  private views(): void {
    const { buffer } = this.exports.memory;
    this.bytes = new Uint8Array(buffer);
    for (const name of INT_COLUMNS) this.ints[name] = new Int32Array(buffer, this.regions.columns[name], this.capacity);
    for (const name of FLOAT_COLUMNS) this.floats[name] = new Float64Array(buffer, this.regions.columns[name], this.capacity);
  }

  private rowAt(slot: number): number {
    return this.regions.rows + this.stride * slot;
  }
}
