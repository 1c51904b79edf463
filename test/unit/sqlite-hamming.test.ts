import { describe, expect, it } from "vitest";
import { HammingTable } from "../../src/store/sqlite/hamming.js";
import { seededUniform } from "../helpers/random-vectors.js";

// The bit mirror's scan (src/store/sqlite/hamming.wat through hamming.ts): distances computed in
// WebAssembly, sixteen bytes at a time, checked against a count done bit by bit, for widths that
// fill whole chunks, leave a chunk partly empty and span many chunks.

const ones = (byte: number): number => [...byte.toString(2)].filter((bit) => bit === "1").length;
const hamming = (a: Uint8Array, b: Uint8Array): number => a.reduce((sum, byte, index) => sum + ones(byte ^ (b[index] as number)), 0);

describe("HammingTable", () => {
  for (const dimensions of [8, 40, 128, 392, 512, 3072]) {
    it(`counts the bits that differ, at ${dimensions} dimensions`, () => {
      const next = seededUniform(dimensions);
      const randomBits = (): Uint8Array => Uint8Array.from({ length: dimensions / 8 }, () => Math.floor(next() * 256));
      const table = new HammingTable(dimensions);
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
        const distances = [...table.distances(query, rows.length)];
        expect(distances).toEqual(rows.map((row) => hamming(row, query)));
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
  }
});
