import { applyConfigMerge } from "./apply.js";
import { mergeJsonEntry } from "./json-entry.js";
import { mergeTomlTable } from "./toml-table.js";

/**
 * A node program (CommonJS, read from standard input by `node -`) that merges Cairn's entry into
 * an existing host configuration: `node - PATH SYNTAX FRESH LABEL`. It is the source text of the
 * three self-contained functions it runs, so the script that carries it needs nothing installed
 * but node, and nothing is fetched at run time.
 */
export function configMergeProgram(): string {
  // A transpiler that keeps function names (esbuild's keepNames, which tsx uses) wraps nested
  // functions in its own __name helper: an identity here keeps the source text runnable alone.
  return `"use strict";
var __name = (target) => target;
${mergeJsonEntry.toString()}
${mergeTomlTable.toString()}
${applyConfigMerge.toString()}
const [path, syntax, fresh, label] = process.argv.slice(2);
const io = { fs: require("fs"), out: (line) => process.stdout.write(line + "\\n"), err: (line) => process.stderr.write(line + "\\n"), now: () => new Date() };
process.exitCode = applyConfigMerge(io, { mergeJsonEntry, mergeTomlTable }, path, syntax, fresh, label);
`;
}
