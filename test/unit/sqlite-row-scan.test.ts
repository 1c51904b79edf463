import { describe, expect, it } from "vitest";
import { RowTable } from "../../src/store/sqlite/row-scan.js";
import { SurveyTable, type SurveyColumns, type SurveyFilter } from "../../src/store/sqlite/survey-table.js";
import { seededUniform } from "../helpers/random-vectors.js";

// The bit mirror's scans (src/store/sqlite/row-scan.wat through survey-table.ts and row-scan.ts):
// Hamming distances with each row's filters checked first, the shortlist picked from them, and
// int8 dot products, computed in WebAssembly sixteen bytes at a time and checked against counts
// done one component at a time, for widths that fill whole chunks, leave a chunk partly empty and
// span many chunks.

const ones = (byte: number): number => [...byte.toString(2)].filter((bit) => bit === "1").length;
const hamming = (a: Uint8Array, b: Uint8Array): number => a.reduce((sum, byte, index) => sum + ones(byte ^ (b[index] as number)), 0);
const dot = (a: Int8Array, b: Int8Array): number => a.reduce((sum, value, index) => sum + value * (b[index] as number), 0);

const NOW = 1_000_000;
/** Passes every row: key 0 allowed, nothing else asked. */
const everything = (): SurveyFilter => ({ keyColumn: "visKey", allowedKeys: Uint8Array.of(1), nowMs: NOW, projectKey: -1, agent: -1, allowedTypes: null, confidenceMin: -Infinity });
const plainColumns: SurveyColumns = { visKey: 0, ownerKey: 0, projectKey: 0, type: 0, agent: 0, confidence: 1, expiresMs: Infinity };

/** Columns varied by row number: keys 0–3, projects 0–2, types 0–1, agents 0–4, confidences 0–0.9, every ninth row expired. */
const variedColumns = (row: number): SurveyColumns => ({
  visKey: row % 4,
  ownerKey: (row + 1) % 4,
  projectKey: row % 3,
  type: row % 2,
  agent: row % 5,
  confidence: (row % 10) / 10,
  expiresMs: row % 9 === 0 ? NOW : NOW + 1,
});

describe("SurveyTable", () => {
  for (const dimensions of [8, 40, 128, 392, 512, 3072]) {
    it(`counts the bits that differ, at ${dimensions} dimensions`, () => {
      const next = seededUniform(dimensions);
      const randomBits = (): Uint8Array => Uint8Array.from({ length: dimensions / 8 }, () => Math.floor(next() * 256));
      const table = new SurveyTable(dimensions);
      const rows: Uint8Array[] = [];
      // Grown a few rows at a time, so rows already held must survive each growth.
      for (let count = 0; count < 300; count++) {
        if (count % 7 === 0) table.grow(count + 7);
        const bits = randomBits();
        table.set(count, bits, plainColumns);
        rows.push(bits);
      }
      // A row set again leaves nothing of what it held before in its padding.
      table.set(5, new Uint8Array(table.stride).fill(0xff), plainColumns);
      table.set(5, rows[5] as Uint8Array, plainColumns);
      const distances = (query: Uint8Array, count = rows.length): number[] => [...table.survey(query, count, everything(), count).distances];
      for (let round = 0; round < 3; round++) {
        const query = randomBits();
        expect(distances(query)).toEqual(rows.map((row) => hamming(row, query)));
      }
      // Identical bits are at 0; all bits flipped at the full width.
      const first = rows[0] as Uint8Array;
      expect(distances(first, 1)).toEqual([0]);
      expect(distances(first.map((byte) => ~byte & 0xff), 1)).toEqual([dimensions]);
      // A copy moves a row's bits, the rest untouched.
      table.copy(299, 3);
      const query = randomBits();
      const after = distances(query);
      expect(after[3]).toBe(hamming(rows[299] as Uint8Array, query));
      expect(after[4]).toBe(hamming(rows[4] as Uint8Array, query));
      expect(table.survey(query, 0, everything(), 10).slots).toHaveLength(0);
    });
  }

  it("lets through exactly the rows every filter asked lets through, and moves a row's columns with its bits", () => {
    const dimensions = 64;
    const next = seededUniform(3);
    const table = new SurveyTable(dimensions);
    const rows = 500;
    for (let row = 0; row < rows; row++) {
      if (row % 100 === 0) table.grow(row + 100);
      table.set(row, Uint8Array.from({ length: 8 }, () => Math.floor(next() * 256)), variedColumns(row));
    }
    const filters: [SurveyFilter, (columns: SurveyColumns) => boolean][] = [
      [everything(), (c) => c.visKey === 0 && c.expiresMs > NOW],
      [{ ...everything(), allowedKeys: Uint8Array.of(0, 1, 0, 1) }, (c) => (c.visKey === 1 || c.visKey === 3) && c.expiresMs > NOW],
      [{ ...everything(), keyColumn: "ownerKey", allowedKeys: Uint8Array.of(0, 0, 1, 0) }, (c) => c.ownerKey === 2 && c.expiresMs > NOW],
      [{ ...everything(), allowedKeys: Uint8Array.of(1, 1, 1, 1), projectKey: 2 }, (c) => c.projectKey === 2 && c.expiresMs > NOW],
      [{ ...everything(), allowedKeys: Uint8Array.of(1, 1, 1, 1), agent: 4 }, (c) => c.agent === 4 && c.expiresMs > NOW],
      [{ ...everything(), allowedKeys: Uint8Array.of(1, 1, 1, 1), allowedTypes: Uint8Array.of(0, 1) }, (c) => c.type === 1 && c.expiresMs > NOW],
      [{ ...everything(), allowedKeys: Uint8Array.of(1, 1, 1, 1), confidenceMin: 0.7 }, (c) => c.confidence >= 0.7 && c.expiresMs > NOW],
      [{ ...everything(), allowedKeys: Uint8Array.of(1, 1, 1, 1), nowMs: 0 }, () => true],
    ];
    const query = new Uint8Array(8);
    const passing = (filter: SurveyFilter): number[] =>
      [...table.survey(query, rows, filter, rows).distances].flatMap((distance, row) => (distance === 0xffff ? [] : [row]));
    for (const [filter, passes] of filters) {
      const expected = Array.from({ length: rows }, (_, row) => row).filter((row) => passes(variedColumns(row)));
      // Not vacuous: each filter lets some rows through and holds some back.
      expect(expected.length).toBeGreaterThan(0);
      expect(passing(filter)).toEqual(expected);
      expect([...table.survey(query, rows, filter, rows).slots].sort((a, b) => a - b)).toEqual(expected);
    }
    // Row 499's columns (agent 4) now stand in row 1 (agent 1) as well.
    table.copy(499, 1);
    expect(passing({ ...everything(), allowedKeys: Uint8Array.of(1, 1, 1, 1), agent: 4 })[0]).toBe(1);
  });

  it("shortlists every row nearer than the last one taken, then rows at its distance until full", () => {
    const table = new SurveyTable(16);
    table.grow(8);
    // Distances to a zero query: the number of set bits.
    const distances = [3, 0, 5, 3, 1, 3, 16, 2];
    distances.forEach((distance, row) => {
      const bits = new Uint8Array(2);
      for (let bit = 0; bit < distance; bit++) bits[bit >> 3] = (bits[bit >> 3] as number) | (1 << (bit & 7));
      table.set(row, bits, plainColumns);
    });
    const shortlist = (size: number): number[] => [...table.survey(new Uint8Array(2), distances.length, everything(), size).slots];
    expect(shortlist(1)).toEqual([1]);
    expect(shortlist(3).sort()).toEqual([1, 4, 7]);
    // Three rows tie at distance 3: two of them fill the shortlist, after the three nearer.
    const five = shortlist(5);
    expect(five.slice(0, 3).sort()).toEqual([1, 4, 7]);
    expect(five.slice(3).every((row) => distances[row] === 3)).toBe(true);
    expect(new Set(five).size).toBe(5);
    expect(shortlist(100).sort((a, b) => a - b)).toEqual([0, 1, 2, 3, 4, 5, 6, 7]);
    expect(shortlist(0)).toEqual([]);

    // Only the rows listed, in the order listed: their distances in that order, the shortlist as rows.
    const listed = Int32Array.of(6, 0, 7, 2);
    const scanned = table.survey(new Uint8Array(2), distances.length, everything(), 2, listed);
    expect([...scanned.distances]).toEqual([16, 3, 2, 5]);
    expect([...scanned.slots].sort()).toEqual([0, 7]);
    expect([...table.survey(new Uint8Array(2), distances.length, everything(), 10, Int32Array.of()).slots]).toEqual([]);
  });
});

describe("RowTable", () => {
  for (const dimensions of [8, 40, 128, 392, 512, 3072]) {
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
