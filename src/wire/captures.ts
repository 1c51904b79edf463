import { z } from "zod";
import { timestamp } from "./timestamp.js";

// Captures: raw session text queued for the archivist to distil into memory (CONTRACT §13).

/** What the author learns of a capture it sent; `duplicate_of` when the same text came before. */
export const captureReceipt = z
  .object({
    id: z.uuid(),
    project: z.string().nullable(),
    session_id: z.string().nullable(),
    bytes: z.number().int().describe("UTF-8 bytes stored, after redaction"),
    redactions: z.number().int().describe("secrets replaced by [REDACTED:<kind>]"),
    created_at: timestamp,
    expires_at: timestamp,
    duplicate_of: z.uuid().optional().describe("set when this agent sent the same text in the same session within 24 h: this is that capture"),
  })
  .meta({ id: "CaptureReceipt" });
export type CaptureReceipt = z.output<typeof captureReceipt>;

const captureStatus = z.enum(["pending", "digested", "dead"]);

/** A capture as its author and the archivist role read it. */
export const capture = z
  .object({
    id: z.uuid(),
    agent_id: z.string().describe("its author"),
    project: z.string().nullable(),
    session_id: z.string().nullable(),
    host: z.string().nullable(),
    content: z.string().describe("as stored: secrets already redacted"),
    bytes: z.number().int(),
    redactions: z.number().int(),
    status: captureStatus,
    attempts: z.number().int().describe("failed digests so far"),
    memory_ids: z.array(z.uuid()).describe("the entries its digest wrote"),
    created_at: timestamp,
    expires_at: timestamp,
    digested_at: timestamp.nullable(),
  })
  .meta({ id: "Capture" });
export type Capture = z.output<typeof capture>;

export const digestReport = z
  .object({
    digested: z.number().int(),
    failed: z.number().int().describe("failed this time, to be tried again"),
    dead: z.number().int().describe("failed for the last time: never listed again"),
    unknown: z.array(z.string()).describe("ids that are no pending capture"),
  })
  .meta({ id: "DigestReport" });
export type DigestReport = z.output<typeof digestReport>;
