import { lstat, readFile } from "node:fs/promises";
import { join } from "node:path";
import { extractUnits } from "./extract.js";
import { MAX_FILE_BYTES, type Unit } from "./units.js";

/**
 * Why a file gave no units: gone from disk (or not a regular file), too big, binary, or left out
 * by the ignore rules before it was read (exclusions.ts).
 */
type SkipReason = "missing" | "oversized" | "binary" | "excluded";

export interface ReadResult {
  units: Unit[];
  /** Files that gave units. */
  compiled: string[];
  skipped: Record<SkipReason, number>;
}

/** How far git looks for a NUL byte when it decides whether a file is binary. */
const BINARY_SNIFF_BYTES = 8000;

async function readSource(root: string, path: string): Promise<{ text: string } | { skip: SkipReason }> {
  const file = join(root, path);
  // lstat: a symbolic link is not followed out of the repository, and a submodule is a directory.
  const stats = await lstat(file).catch(() => null);
  if (stats === null || !stats.isFile()) return { skip: "missing" };
  if (stats.size > MAX_FILE_BYTES) return { skip: "oversized" };
  const bytes = await readFile(file).catch(() => null);
  if (bytes === null) return { skip: "missing" };
  if (bytes.byteLength > MAX_FILE_BYTES) return { skip: "oversized" };
  if (bytes.subarray(0, BINARY_SNIFF_BYTES).includes(0)) return { skip: "binary" };
  return { text: bytes.toString("utf8") };
}

/** The units of each file, read from the work tree; the text never leaves this function. */
export async function readUnits(root: string, paths: string[], excluded = 0): Promise<ReadResult> {
  const result: ReadResult = { units: [], compiled: [], skipped: { missing: 0, oversized: 0, binary: 0, excluded } };
  for (const path of paths) {
    const source = await readSource(root, path);
    if ("skip" in source) {
      result.skipped[source.skip]++;
      continue;
    }
    result.units.push(...(await extractUnits(path, source.text)));
    result.compiled.push(path);
  }
  return result;
}
