import { describe, expect, it } from "vitest";
import { RowTable } from "../../src/store/sqlite/row-scan.js";
import { seededUniform } from "../helpers/random-vectors.js";

// The bit mirror's scans (src/store/sqlite/row-scan.wat through row-scan.ts): Hamming distances
// and int8 dot products computed in WebAssembly, sixteen bytes at a time, checked against counts
// done one component at a time, for widths that fill whole chunks, leave a chunk partly empty and
// span many chunks.

const ones = (byte: number): number => [...byte.toString(2)].filter((bit) => bit === "1").length;
const hamming = (a: Uint8Array, b: Uint8Array): number => a.reduce((sum, byte, index) => sum + ones(byte ^ (b[index] as number)), 0);
const dot = (a: Int8Array, b: Int8Array): number => a.reduce((sum, value, index) => sum + value * (b[index] as number), 0);

describe("RowTable", () => {
  for (const dimensions of [8, 40, 128, 392, 512, 3072]) {
    it(`counts the bits that differ, at ${dimensions} dimensions`, () => {
      const next = seededUniform(dimensions);
      const randomBits = (): Uint8Array => Uint8Array.from({ length: dimensions / 8 }, () => Math.floor(next() * 256));
      const table = new RowTable(dimensions / 8);
      const rows: Uint8Array[] = [];
      // Grown a few rows at a time, so rows already held must survive each growth.
      for (let count = 0; count < 300; count++) {
        if (count % 7 === 0) table.grow(count + 7);
        const bits = randomBits();
        table.set(count, bits);
        rows.push(bits);
      }
      // A row set again leaves nothing of what it held before in its padding.
      table.set(5, new Uint8Array(table.stride).fill(0xff));
      table.set(5, rows[5] as Uint8Array);
      for (let round = 0; round < 3; round++) {
        const query = randomBits();
        expect([...table.distances(query, rows.length)]).toEqual(rows.map((row) => hamming(row, query)));
      }
      // Identical bits are at 0; all bits flipped at the full width.
      const first = rows[0] as Uint8Array;
      expect(table.distances(first, 1)[0]).toBe(0);
      expect(table.distances(first.map((byte) => ~byte & 0xff), 1)[0]).toBe(dimensions);
      // A copy moves a row's bits, the rest untouched.
      table.copy(299, 3);
      const query = randomBits();
      const after = [...table.distances(query, rows.length)];
      expect(after[3]).toBe(hamming(rows[299] as Uint8Array, query));
      expect(after[4]).toBe(hamming(rows[4] as Uint8Array, query));
      expect(table.distances(query, 0)).toHaveLength(0);
    });

    it(`multiplies int8 rows, at ${dimensions} dimensions`, () => {
      const next = seededUniform(dimensions + 1);
      const randomRow = (): Int8Array => Int8Array.from({ length: dimensions }, () => Math.floor(next() * 255) - 127);
      const table = new RowTable(dimensions);
      const rows: Int8Array[] = [];
      for (let count = 0; count < 200; count++) {
        if (count % 9 === 0) table.grow(count + 9);
        const row = randomRow();
        table.set(count, row);
        rows.push(row);
      }
      const query = randomRow();
      // Any rows, in any order, repeated or not.
      const slots = Int32Array.from([199, 0, 17, 17, 3, 150, 42]);
      expect([...table.dots(query, slots)]).toEqual([...slots].map((slot) => dot(rows[slot] as Int8Array, query)));
      // The extremes, where a narrower sum would overflow.
      const most = new Int8Array(dimensions).fill(-127);
      table.set(0, most);
      expect([...table.dots(most, Int32Array.from([0]))]).toEqual([127 * 127 * dimensions]);
      expect([...table.dots(most.map((value) => -value), Int32Array.from([0]))]).toEqual([-127 * 127 * dimensions]);
      expect(table.dots(query, new Int32Array(0))).toHaveLength(0);
    });
  }
});
