import { closeSync, openSync, readSync } from "node:fs";

/**
 * Whether the file at `path` holds `needle`, read a slice of `sliceBytes` at a time, so that a
 * large file is never held whole (a Buffer that big stays until its thread next collects garbage).
 */
export function fileContains(path: string, needle: Buffer, sliceBytes = 256 * 1024): boolean {
  if (needle.length === 0) return true;
  const slice = Buffer.alloc(Math.max(sliceBytes, 2 * needle.length));
  const fd = openSync(path, "r");
  try {
    // Each read keeps the previous slice's last needle.length - 1 bytes, so a needle across two
    // slices is still found.
    let kept = 0;
    for (;;) {
      const read = readSync(fd, slice, kept, slice.length - kept, null);
      if (read === 0) return false;
      const filled = kept + read;
      if (slice.subarray(0, filled).includes(needle)) return true;
      kept = Math.min(needle.length - 1, filled);
      slice.copy(slice, 0, filled - kept, filled);
    }
  } finally {
    closeSync(fd);
  }
}
