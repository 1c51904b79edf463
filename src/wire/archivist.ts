import { z } from "zod";
import { memoryEntry } from "./memory.js";
import { timestamp } from "./timestamp.js";

// The archivist singleton as the API shows it: its lease, its key-value state, its status for
// humans, and what its curation calls return.

/**
 * State keys the archivist writes for humans to read through `archivist_status`: `process` when it
 * takes the lease, `lastPassReport` (`at` and the counts) after each scheduled pass. The strings are
 * stored data; they never change.
 */
export const STATUS_KEYS = { process: "process", lastPassReport: "last_pass" } as const;

export const archivistLease = z
  .object({
    granted: z.boolean().describe("true when the caller holds the lease now"),
    holder: z.string().nullable(),
    expires_at: timestamp.nullable(),
    token: z.number().int().describe("fencing token: grows each time the lease changes hands"),
  })
  .meta({ id: "ArchivistLease" });
export type ArchivistLease = z.output<typeof archivistLease>;

export const archivistState = z.object({ key: z.string(), value: z.unknown(), updated_at: timestamp }).meta({ id: "ArchivistState" });
export type ArchivistState = z.output<typeof archivistState>;

export const archivistStatus = z
  .object({
    enabled: z.boolean().describe("whether the server starts the archivist (ARCHIVIST); one may run elsewhere all the same"),
    holder: z.string().nullable().describe("the working archivist's lease holder name"),
    expires_at: timestamp.nullable(),
    llm: z.boolean().nullable().describe("whether the working archivist has a language model; null before one has started"),
    provider: z.string().nullable(),
    last_pass: z.record(z.string(), z.unknown()).nullable().describe("the last scheduled pass: `at` and its counts"),
  })
  .meta({ id: "ArchivistStatus" });
export type ArchivistStatus = z.output<typeof archivistStatus>;

export const confidenceUpdate = z.object({ updated: z.number().int() });
export type ConfidenceUpdate = z.output<typeof confidenceUpdate>;

/** A merge: the new entry, and the sources it superseded (soft-deleted). */
export const mergeResult = z.object({ entry: memoryEntry, superseded: z.array(z.uuid()) });
export type MergeResult = z.output<typeof mergeResult>;
