import { z } from "zod";
import { refuse } from "./validation.js";

/**
 * Pieces of requests that several operations validate. The records the API returns (and the enums
 * that are both input and output, such as memoryType) are declared once, in src/wire/, as are the
 * fields a service's input shares with them (src/wire/fields.ts).
 */



/** The version an If-Match value expects (`3`, `"3"`, `W/"3"`), or null when it names none. */
export function parseIfMatch(header: string): number | null {
  const digits = /^\s*(?:W\/)?"?(\d{1,15})"?\s*$/.exec(header)?.[1];
  return digits === undefined ? null : Number(digits);
}

/** An If-Match header as the version it expects; one naming no version is 400, not 422 (CONTRACT §3). */
export const ifMatchVersion = z
  .string()
  .max(64)
  .transform((header, context) => parseIfMatch(header) ?? refuse(context, "BAD_REQUEST", "unparsable if-match header"));

export const cursorParam = z.string().min(1).max(512).optional().describe("the next cursor of the previous page");



export const content = z
  .string()
  .refine((value) => value.trim().length > 0, "must not be empty")
  .describe("markdown; at most MAX_CONTENT_BYTES bytes");

export const comment = z.string().max(8000).describe("recorded in the task's comment log");

/** Code takes part in reads of memory only when asked for (docs/search.md "Code where it belongs"). */
export const includeCode = z.boolean().optional().describe("also compiled code (left out unless type=compiled or source_kind=compile)");

/** A read's answer in compact form (MCP's default: a tool takes `verbose` instead). */
export const compactFlag = z.boolean().optional();

/** A budget for what a read answers, in tokens (4 characters of JSON each): filled best first, nothing cut, the rest counted. */
export const maxTokens = z.number().int().min(100).max(1_000_000).optional().describe("fit the answer in this many tokens; what does not fit is counted");
