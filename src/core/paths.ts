import { existsSync, readFileSync } from "node:fs";
import { dirname, join } from "node:path";
import { fileURLToPath, pathToFileURL } from "node:url";
import { compiledCopiesCurrent } from "./compiled-copies.js";

/** The checkout or installed package root, found the same way from src/ (tests) and dist/. */
function findPackageRoot(): string {
  let dir = dirname(fileURLToPath(import.meta.url));
  for (;;) {
    if (existsSync(join(dir, "package.json")) && existsSync(join(dir, "models"))) return dir;
    const parent = dirname(dir);
    if (parent === dir) throw new Error("cairn: cannot locate the package root");
    dir = parent;
  }
}

export const packageRoot = findPackageRoot();

export const packageVersion: string = (
  JSON.parse(readFileSync(join(packageRoot, "package.json"), "utf8")) as { version: string }
).version;

export const bundledModelDir = join(packageRoot, "models", "universal-sentence-encoder-lite");
export const migrationsDir = join(packageRoot, "src", "store", "migrations");
/** The built command-line entry (`bin/cairn` runs it). */
export const cliPath = join(packageRoot, "dist", "src", "cli.js");

const fromSources = import.meta.url.endsWith(".ts");
/**
 * A module of src/ by its path there (`services/graph/graph-worker.js`), as the running code has
 * it: the build's copy under dist/src, or, when the code runs from sources, the source (a worker
 * thread loads it through the TypeScript loader) unless the build is current with every source.
 * Worker entries are found this way, never beside their caller: in the bundled command line the
 * caller is a chunk in dist/src/chunks.
 */
export const srcModule = (path: string): URL => (fromSources && !buildIsCurrent() ? pathToFileURL(join(packageRoot, "src", path)) : builtModule(path));
/** The build's copy of a module of src/ (`embed/onnx-worker.js`), whatever the running code is. */
export const builtModule = (path: string): URL => pathToFileURL(join(packageRoot, "dist", "src", path));

let buildCurrent: boolean | undefined;
/**
 * Whether the build under dist/src is current with every source (compiledCopiesCurrent): then a
 * worker started from the sources (the test suite, after `npm test`'s build) runs the same code
 * from the build, whose thread starts in a fraction of the TypeScript loader's time (the feed
 * parser's: 0.3 s against 0.7–1.2 s). Read once a process.
 */
function buildIsCurrent(): boolean {
  buildCurrent ??= compiledCopiesCurrent(join(packageRoot, "src"), join(packageRoot, "dist", "src"));
  return buildCurrent;
}
/**
 * How this installation's stdio bridge is started, by absolute paths that work from any working
 * directory: this node, this package's CLI. Generated configurations use it for the machine the
 * server runs on.
 */
export const bridgeLauncher = (): string[] => [process.execPath, cliPath, "mcp"];
/** The web UI as `npm run build` bundles it. */
export const uiDir = join(packageRoot, "dist", "ui");

// Where a server keeps things inside its DATA_DIR.
export const databasePath = (dataDir: string): string => join(dataDir, "cairn.db");
export const auditDir = (dataDir: string): string => join(dataDir, "audit");
export const credentialsPath = (dataDir: string): string => join(dataDir, "credentials.json");
