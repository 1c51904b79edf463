/** CONTRACT §18: what `cairn compile` sends for one piece of code — hashes and descriptions, never source. */

export type UnitKind = "module" | "function" | "class" | "interface" | "type" | "method" | "const" | "file";

export interface UnitDep {
  kind: "import" | "symbol";
  name: string;
}

export interface Unit {
  path: string;
  /** "" for the module (or file) unit; `Class.method` for a method. */
  symbol: string;
  kind: UnitKind;
  lang: string;
  /** 1-based, inclusive. */
  start_line: number;
  end_line: number;
  /** SHA-256 (hex) of the symbol's text; for a module, of its shape (sorted imports and top-level names). */
  sha: string;
  signature?: string;
  /** ≤ 4 KiB: the signature, the doc comment's first paragraph, members, names used. */
  description: string;
  deps: UnitDep[];
}

/** Files larger than this become one `file` unit without being parsed. */
export const MAX_FILE_BYTES = 1024 * 1024;
/** At most this many units per file, the module unit included. */
export const MAX_UNITS_PER_FILE = 500;
export const MAX_SIGNATURE_CHARS = 300;
/** The server takes at most this many deps per unit; a unit with more keeps the first ones. */
export const MAX_DEPS_PER_UNIT = 200;
export const MAX_DESCRIPTION_BYTES = 4096;
