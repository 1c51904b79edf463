import { z } from "zod";

// The merkle summary a peer compares against its own copy (CONTRACT §15, docs/feeds.md).

const sha256Hex = z.string().regex(/^[0-9a-f]{64}$/);

export const merkleSummary = z
  .object({
    project: z.string().nullable().describe("null: the global entries"),
    root: sha256Hex.describe("SHA-256 of the sorted `bucket:hash` lines of the non-empty buckets, joined by \\n"),
    count: z.number().int().describe("entries in the selection, tombstones included"),
    buckets: z.record(z.string(), sha256Hex).describe("each non-empty bucket (two hex digits) → SHA-256 of its sorted `id:leaf` lines, joined by \\n"),
  })
  .meta({ id: "MerkleSummary" });
export type MerkleSummary = z.output<typeof merkleSummary>;

export const merkleBucket = z
  .object({
    project: z.string().nullable(),
    bucket: z.string(),
    entries: z.record(z.string(), sha256Hex).describe("entry id → its leaf"),
  })
  .meta({ id: "MerkleBucket" });
export type MerkleBucket = z.output<typeof merkleBucket>;
