import { z } from "zod";
import { timestamp } from "./timestamp.js";

// Compile (CONTRACT §18): what a client sends for a piece of code — hashes and generated
// descriptions, never source — and what the server answers. `cairn compile` builds these units.

export const MAX_UNITS_PER_COMPILE = 2000;
export const MAX_UNITS_PER_CHECK = 5000;
export const MAX_PRUNE_PATHS = 2000;
const MAX_DESCRIPTION_BYTES = 4096;
const MAX_DEPS_PER_UNIT = 200;

export const unitKind = z.enum(["module", "function", "class", "interface", "type", "method", "const", "file"]);
export type UnitKind = z.output<typeof unitKind>;

export const unitPath = z.string().min(1).max(1024).describe("the file's path in the repository, as git names it");
export const unitSymbol = z.string().max(512).describe('"" for a module or file; `Class.method` for a method');
/** A SHA-256 in hex; upper case is read as lower case, so one sha has one spelling. */
export const unitSha = z
  .string()
  .regex(/^[0-9a-fA-F]{64}$/, "must be a SHA-256 in hex (64 characters)")
  .transform((sha) => sha.toLowerCase());

const unitDep = z.strictObject({
  kind: z.enum(["import", "symbol"]),
  name: z.string().min(1).max(512),
});

/** One piece of code: where it is, what it is, the sha of its text and what describes it. */
export const compileUnit = z
  .strictObject({
    path: unitPath,
    symbol: unitSymbol,
    kind: unitKind,
    lang: z.string().min(1).max(64).regex(/^\S+$/, "must be one word").describe("typescript, python… or a file's extension"),
    start_line: z.number().int().min(1).max(100_000_000),
    end_line: z.number().int().min(1).max(100_000_000),
    sha: unitSha.describe("sha256 (hex) of the symbol's text; of its shape for a module"),
    signature: z.string().max(2000).optional(),
    description: z
      .string()
      .refine((text) => Buffer.byteLength(text, "utf8") <= MAX_DESCRIPTION_BYTES, `must be at most ${MAX_DESCRIPTION_BYTES} bytes`)
      .describe("signature, the doc comment's first paragraph, members, names used; never the body"),
    deps: z.array(unitDep).max(MAX_DEPS_PER_UNIT).describe("symbol deps become depends_on edges to the anchors they name"),
  })
  .refine((unit) => unit.end_line >= unit.start_line, { message: "must not be before start_line", path: ["end_line"] });
export type CompileUnit = z.output<typeof compileUnit>;

/** What POST /compile did. */
export const compileResult = z
  .object({
    project: z.string().nullable(),
    anchors: z.number().int().describe("how many anchors the project has now"),
    created: z.number().int(),
    updated: z.number().int(),
    unchanged: z.number().int(),
    removed: z.number().int(),
    invalidated: z.array(z.uuid()).describe("entries marked stale by this compile that you can see"),
    memory_ids: z.array(z.uuid()).describe("the compiled entry of each unit, in the order sent"),
  })
  .meta({ id: "CompileResult" });
export type CompileResult = z.output<typeof compileResult>;

const checkStatus = z.enum(["fresh", "stale", "unknown"]);

/** A unit's standing: fresh (same sha), stale (another sha), unknown (no anchor yet). */
export const checkItem = z
  .object({
    path: z.string(),
    symbol: z.string(),
    status: checkStatus,
    memory_id: z.uuid().nullable(),
  })
  .meta({ id: "CompileCheckItem" });
export type CheckItem = z.output<typeof checkItem>;

/** An anchor: one compiled piece of code and its entry. */
export const compileAnchor = z
  .object({
    project: z.string().nullable(),
    path: z.string(),
    symbol: z.string(),
    kind: unitKind,
    lang: z.string(),
    start_line: z.number().int(),
    end_line: z.number().int(),
    sha: z.string(),
    previous_sha: z.string().nullable().describe("the sha before the last change"),
    signature: z.string().nullable(),
    memory_id: z.uuid(),
    commit: z.string().nullable().describe("the commit the current sha was compiled at"),
    created_at: timestamp,
    updated_at: timestamp,
  })
  .meta({ id: "CompileAnchor" });
export type CompileAnchor = z.output<typeof compileAnchor>;
