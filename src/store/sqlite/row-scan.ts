import { readFileSync } from "node:fs";
import { builtModule } from "../../core/paths.js";

// Node runs WebAssembly; the TypeScript libraries this project builds with (no DOM) do not
// describe it, so the little used here is described here.
interface WasmMemory {
  readonly buffer: ArrayBuffer;
  grow(pages: number): number;
}
interface RowScanExports {
  memory: WasmMemory;
  distances(query: number, rows: number, chunks: number, count: number, out: number): void;
  dots(query: number, rows: number, chunks: number, slots: number, count: number, out: number): void;
}
interface Wasm {
  Module: new (bytes: Uint8Array) => object;
  Instance: new (module: object) => { exports: unknown };
}
const wasm = (globalThis as unknown as { WebAssembly: Wasm }).WebAssembly;

/** Bytes of one SIMD register: a row is padded to a whole number of them. */
const CHUNK = 16;
const PAGE = 65_536;

let compiled: object | null = null;
/** row-scan.wat as `npm run build` compiles it (423 bytes), compiled once per process. */
const rowScanModule = (): object => (compiled ??= new wasm.Module(readFileSync(builtModule("store/sqlite/row-scan.wasm"))));

/**
 * Rows of bytes in WebAssembly memory, and scans of them against a query computed by
 * row-scan.wat sixteen bytes at a time: Hamming distances of sign bits (about eight times faster
 * than the same count in JavaScript, 32 bits at a time: 0.05 against 0.36 ms for 10,000 rows of
 * 512 bits), and dot products of int8 components.
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
    this.exports = new wasm.Instance(rowScanModule()).exports as RowScanExports;
    this.bytes = new Uint8Array(this.exports.memory.buffer);
  }

  /** Room for `rows` rows; those held stay where they are. */
  grow(rows: number): void {
    if (rows <= this.capacity) return;
    const needed = this.stride * (1 + rows) + 8 * rows;
    const pages = Math.ceil(needed / PAGE) - this.exports.memory.buffer.byteLength / PAGE;
    if (pages > 0) this.exports.memory.grow(pages);
    this.bytes = new Uint8Array(this.exports.memory.buffer);
    this.capacity = rows;
  }

  /** Row `slot`'s bytes (bytes past the row's width are ignored; a shorter row is padded with zeros). */
  set(slot: number, row: Uint8Array | Int8Array): void {
    const at = this.rowAt(slot);
    const width = Math.min(row.length, this.stride);
    this.bytes.set(new Uint8Array(row.buffer, row.byteOffset, width), at);
    this.bytes.fill(0, at + width, at + this.stride);
  }

  /** Row `from`'s bytes copied over row `to`'s. */
  copy(from: number, to: number): void {
    const at = this.rowAt(from);
    this.bytes.copyWithin(this.rowAt(to), at, at + this.stride);
  }

  /**
   * The Hamming distance of each of the first `count` rows to `query`, by row. The array is this
   * table's scratch: valid, and free to write over, until the next scan or `grow`.
   */
  distances(query: Uint8Array, count: number): Uint16Array {
    this.set(-1, query);
    const out = this.scratchAt();
    if (count > 0) this.exports.distances(this.rowAt(-1), this.rowAt(0), this.chunks, count, out);
    return new Uint16Array(this.exports.memory.buffer, out, count);
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
