import { readFileSync } from "node:fs";
import { builtModule } from "../../core/paths.js";

// Node runs WebAssembly; the TypeScript libraries this project builds with (no DOM) do not
// describe it, so the little used here is described here.
interface WasmMemory {
  readonly buffer: ArrayBuffer;
  grow(pages: number): number;
}
export interface RowScanExports {
  memory: WasmMemory;
  survey(
    query: number,
    rows: number,
    chunks: number,
    count: number,
    out: number,
    keys: number,
    allowed: number,
    expiries: number,
    now: number,
    projects: number,
    project: number,
    agents: number,
    agent: number,
    types: number,
    allowedTypes: number,
    confidences: number,
    confidenceMin: number,
    histogram: number,
    slots: number,
  ): number;
  select(distances: number, count: number, cutoff: number, out: number, nearer: number, taken: number): void;
  dots(query: number, rows: number, chunks: number, slots: number, count: number, out: number): void;
}
interface Wasm {
  Module: new (bytes: Uint8Array) => object;
  Instance: new (module: object) => { exports: unknown };
}
const wasm = (globalThis as unknown as { WebAssembly: Wasm }).WebAssembly;

/** Bytes of one SIMD register: a row is padded to a whole number of them. */
export const CHUNK = 16;
const PAGE = 65_536;

/** Grows `memory` to at least `end` bytes; true when it grew (which detaches every view of it). */
export function reserveMemory(memory: WasmMemory, end: number): boolean {
  const pages = Math.ceil(end / PAGE) - memory.buffer.byteLength / PAGE;
  if (pages <= 0) return false;
  memory.grow(pages);
  return true;
}

/** `row`'s bytes written at `at` (those past `stride` ignored), then zeros up to `stride`. */
export function writeRow(bytes: Uint8Array, at: number, stride: number, row: Uint8Array | Int8Array): void {
  const width = Math.min(row.length, stride);
  bytes.set(new Uint8Array(row.buffer, row.byteOffset, width), at);
  bytes.fill(0, at + width, at + stride);
}

let compiled: object | null = null;
/** An instance of row-scan.wat as `npm run build` compiles it (under a kilobyte), compiled once per process, with a memory of its own. */
export const rowScanInstance = (): RowScanExports =>
  new wasm.Instance((compiled ??= new wasm.Module(readFileSync(builtModule("store/sqlite/row-scan.wasm"))))).exports as RowScanExports;

/**
 * Rows of int8 components in WebAssembly memory, and their dot products with a query computed
 * by row-scan.wat sixteen bytes at a time. (The sign bits, with the filter columns, are a
 * `SurveyTable`.)
 *
 * Memory: the query's row, then the rows, then scratch for a scan's slots and results. Growing
 * moves only the scratch; a table never shrinks (WebAssembly memory cannot), so a smaller one is
 * a new table.
 */
export class RowTable {
  /** Bytes a row takes: its bytes, then zeros up to a whole chunk. */
  readonly stride: number;
  private readonly chunks: number;
  private readonly exports: RowScanExports;
  private capacity = 0;
  private bytes: Uint8Array;

  constructor(width: number) {
    this.chunks = Math.max(1, Math.ceil(width / CHUNK));
    this.stride = this.chunks * CHUNK;
    this.exports = rowScanInstance();
    this.bytes = new Uint8Array(this.exports.memory.buffer);
  }

  /** Room for `rows` rows; those held stay where they are. */
  grow(rows: number): void {
    if (rows <= this.capacity) return;
    reserveMemory(this.exports.memory, this.stride * (1 + rows) + 8 * rows);
    this.bytes = new Uint8Array(this.exports.memory.buffer);
    this.capacity = rows;
  }

  /** Row `slot`'s bytes (bytes past the row's width are ignored; a shorter row is padded with zeros). */
  set(slot: number, row: Uint8Array | Int8Array): void {
    writeRow(this.bytes, this.rowAt(slot), this.stride, row);
  }

  /** Row `from`'s bytes copied over row `to`'s. */
  copy(from: number, to: number): void {
    const at = this.rowAt(from);
    this.bytes.copyWithin(this.rowAt(to), at, at + this.stride);
  }

  /**
   * The dot product of each listed row, read as int8, with `query`, in the order listed. The array
   * is this table's scratch: valid until the next scan or `grow`.
   */
  dots(query: Int8Array, slots: Int32Array): Int32Array {
    this.set(-1, query);
    const at = this.scratchAt();
    const out = at + 4 * slots.length;
    new Int32Array(this.exports.memory.buffer, at, slots.length).set(slots);
    if (slots.length > 0) this.exports.dots(this.rowAt(-1), this.rowAt(0), this.chunks, at, slots.length, out);
    return new Int32Array(this.exports.memory.buffer, out, slots.length);
  }

  private rowAt(slot: number): number {
    return this.stride * (slot + 1);
  }

  private scratchAt(): number {
    return this.rowAt(this.capacity);
  }
}
