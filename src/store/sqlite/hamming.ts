import { readFileSync } from "node:fs";
import { builtModule } from "../../core/paths.js";

// Node runs WebAssembly; the TypeScript libraries this project builds with (no DOM) do not
// describe it, so the little used here is described here.
interface WasmMemory {
  readonly buffer: ArrayBuffer;
  grow(pages: number): number;
}
interface HammingExports {
  memory: WasmMemory;
  distances(query: number, rows: number, chunks: number, count: number, out: number): void;
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
/** hamming.wat as `npm run build` compiles it: 209 bytes, compiled once per process. */
const hammingModule = (): object => (compiled ??= new wasm.Module(readFileSync(builtModule("store/sqlite/hamming.wasm"))));

/**
 * Rows of sign bits in WebAssembly memory, and their Hamming distances to a query, computed by
 * hamming.wat sixteen bytes at a time (about eight times faster than the same count in
 * JavaScript, 32 bits at a time: 0.05 against 0.36 ms for 10,000 rows of 512 bits).
 *
 * Memory: the query's row, then the rows, then a distance a row. Growing moves only the
 * distances, which are scratch; a table never shrinks (WebAssembly memory cannot), so a smaller
 * one is a new table.
 */
export class HammingTable {
  /** Bytes a row takes: its bits, then zeros up to a whole chunk. */
  readonly stride: number;
  private readonly chunks: number;
  private readonly exports: HammingExports;
  private capacity = 0;
  private bytes: Uint8Array;

  constructor(dimensions: number) {
    this.chunks = Math.max(1, Math.ceil(dimensions / (8 * CHUNK)));
    this.stride = this.chunks * CHUNK;
    this.exports = new wasm.Instance(hammingModule()).exports as HammingExports;
    this.bytes = new Uint8Array(this.exports.memory.buffer);
  }

  /** Room for `rows` rows; those held stay where they are. */
  grow(rows: number): void {
    if (rows <= this.capacity) return;
    const needed = this.stride * (1 + rows) + 2 * rows;
    const pages = Math.ceil(needed / PAGE) - this.exports.memory.buffer.byteLength / PAGE;
    if (pages > 0) this.exports.memory.grow(pages);
    this.bytes = new Uint8Array(this.exports.memory.buffer);
    this.capacity = rows;
  }

  /** Row `slot`'s bits (as vec0 lays them out; bytes past the row's width are ignored). */
  set(slot: number, bits: Uint8Array): void {
    const at = this.rowAt(slot);
    const width = Math.min(bits.length, this.stride);
    this.bytes.set(bits.subarray(0, width), at);
    this.bytes.fill(0, at + width, at + this.stride);
  }

  /** Row `from`'s bits copied over row `to`'s. */
  copy(from: number, to: number): void {
    const at = this.rowAt(from);
    this.bytes.copyWithin(this.rowAt(to), at, at + this.stride);
  }

  /**
   * The distance of each of the first `count` rows to `query`, by row. The array is this table's
   * scratch: valid, and free to write over, until the next call or `grow`.
   */
  distances(query: Uint8Array, count: number): Uint16Array {
    this.set(-1, query);
    const out = this.rowAt(this.capacity);
    if (count > 0) this.exports.distances(0, this.stride, this.chunks, count, out);
    return new Uint16Array(this.exports.memory.buffer, out, count);
  }

  private rowAt(slot: number): number {
    return this.stride * (slot + 1);
  }
}
