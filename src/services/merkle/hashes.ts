import { createHash } from "node:crypto";

// The merkle summary's hashing (CONTRACT §15), over the leaves the store stamps at write time
// (src/store/sql/merkle.ts says what a leaf is). A set of lines is hashed sorted and joined by
// "\n", with no final newline: the empty set is then sha256(""), as the contract says.

const sha256Hex = (text: string): string => createHash("sha256").update(text, "utf8").digest("hex");

/** Code-unit order, which for the ASCII ids and hex digits hashed here is byte order: every peer sorts alike. */
export const byText = (a: string, b: string): number => (a < b ? -1 : a > b ? 1 : 0);

const hashLines = (lines: string[]): string => sha256Hex(lines.sort(byText).join("\n"));

/** A bucket's hash: of its `id:leaf` lines. */
export const bucketHash = (leaves: readonly { id: string; leaf: string }[]): string => hashLines(leaves.map(({ id, leaf }) => `${id}:${leaf}`));

/** The root: of the `bucket:hash` lines of the non-empty buckets. */
export const rootHash = (buckets: readonly { bucket: string; hash: string }[]): string => hashLines(buckets.map(({ bucket, hash }) => `${bucket}:${hash}`));

