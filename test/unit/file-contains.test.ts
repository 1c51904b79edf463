import { rmSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { fileContains } from "../../src/core/file-contains.js";
import { tempDir } from "../helpers/server.js";

// The embedding thread asks whether a model file names DynamicQuantizeLinear without holding the
// file whole; a needle across two slices must still be found.

describe("fileContains", () => {
  const dir = tempDir("cairn-file-contains-");
  afterAll(() => rmSync(dir, { recursive: true, force: true }));
  const needle = Buffer.from("DynamicQuantizeLinear");
  let files = 0;
  const fileOf = (bytes: Buffer): string => {
    const path = join(dir, `file-${files++}`);
    writeFileSync(path, bytes);
    return path;
  };
  const filler = (length: number): Buffer => Buffer.alloc(length, "x");

  it("finds the needle at every offset around a slice's edge", () => {
    const slice = 64;
    for (let at = 0; at < 3 * slice; at++) {
      const path = fileOf(Buffer.concat([filler(at), needle, filler(50)]));
      expect(fileContains(path, needle, slice), `needle at ${at}`).toBe(true);
    }
  });

  it("finds it as the file's last bytes", () => {
    expect(fileContains(fileOf(Buffer.concat([filler(1000), needle])), needle, 64)).toBe(true);
  });

  it("says no for a file without it, a part of it cut across slices, and an empty file", () => {
    expect(fileContains(fileOf(filler(5000)), needle, 64)).toBe(false);
    const cut = Buffer.concat([filler(60), needle.subarray(0, 10), filler(1), needle.subarray(10), filler(60)]);
    expect(fileContains(fileOf(cut), needle, 64)).toBe(false);
    expect(fileContains(fileOf(Buffer.alloc(0)), needle, 64)).toBe(false);
  });

  it("answers for the bundled model, which is quantized as it runs", () => {
    expect(fileContains(join(import.meta.dirname, "..", "..", "models", "universal-sentence-encoder-lite", "model-int8.onnx"), needle)).toBe(true);
  });
});
