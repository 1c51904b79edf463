// Bundles the command line (src/cli.ts and everything it imports of ours) into dist/src/cli.js and
// its chunks, in place of the compiler's one file per module: a server's start loaded some six
// hundred of them, and resolving, reading and compiling each was a third of the time to listen.
// Every dynamic import stays a chunk loaded when its command needs it. Packages written in
// JavaScript alone are bundled too (zod's ES modules alone were over a hundred files); those with
// native parts or that find their own files beside themselves stay external. Worker threads start
// from the compiler's copies under dist/src, which this leaves in place.
import { readdirSync, rmSync, statSync } from "node:fs";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import { build } from "esbuild";

/** Packages with native parts, or that find their own files beside themselves: not bundled. */
const NATIVE_OR_FILE_LOCATING = [
  "better-sqlite3",
  "sqlite-vec",
  "onnxruntime-node",
  "@anush008/tokenizers",
  "hnswlib-node",
  "@vscode/tree-sitter-wasm",
  "web-tree-sitter",
  "swagger-ui-dist",
  "pg-native",
];

const root = join(dirname(fileURLToPath(import.meta.url)), "..");
const outdir = join(root, "dist", "src");
const result = await build({
  absWorkingDir: root,
  entryPoints: { cli: "src/cli.ts" },
  outdir,
  entryNames: "[name]",
  chunkNames: "chunks/[name]-[hash]",
  bundle: true,
  splitting: true,
  format: "esm",
  platform: "node",
  target: "node20",
  external: NATIVE_OR_FILE_LOCATING,
  // CommonJS packages bundled into ES modules still call require for node's modules.
  banner: { js: 'import { createRequire as __cairnRequire } from "node:module"; const require = __cairnRequire(import.meta.url);' },
  sourcemap: "linked",
  // dist/src/cli.js is the compiler's output until this replaces it.
  allowOverwrite: true,
  legalComments: "eof",
  // V8 keeps each loaded chunk's source for as long as the process runs (lazy compilation reads it
  // again): without indentation and comments a server holds about 10 MB less. Identifiers are not
  // renamed, so a stack trace still names its functions (a function assigned to a property by the
  // name V8 infers from it); `node --enable-source-maps` maps its positions back to the sources.
  minifyWhitespace: true,
  minifySyntax: true,
  logLevel: "warning",
  metafile: true,
});

// Chunks of earlier builds are kept a day: a server or bridge started from one still imports its
// own chunks on demand (their names carry a content hash), and a rebuild must not break it.
const chunksDir = join(outdir, "chunks");
const current = new Set(Object.keys(result.metafile.outputs).map((path) => join(root, path)));
const dayAgo = Date.now() - 24 * 60 * 60 * 1000;
for (const name of readdirSync(chunksDir)) {
  const path = join(chunksDir, name);
  if (!current.has(path) && statSync(path).mtimeMs < dayAgo) rmSync(path, { force: true });
}
