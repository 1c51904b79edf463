import { existsSync } from "node:fs";
import { fileURLToPath } from "node:url";
import { Worker } from "node:worker_threads";

/**
 * Loads TypeScript in a worker thread, which cannot load .ts files itself. A development
 * dependency: only runs from the TypeScript sources (the test suite, the benchmarks' tooling) use
 * it, so it is named here and never imported by the built server.
 */
const TYPESCRIPT_LOADER = "tsx/esm/api";

/**
 * Starts the worker module at `entry` (its `.js` URL, beside the caller). From the build that file
 * exists; from the sources only its `.ts` does, which is loaded through the TypeScript loader those
 * runs have, not from the build, whose copy may be older.
 */
export function startWorker(entry: URL): Worker {
  if (existsSync(fileURLToPath(entry))) return new Worker(entry, { execArgv: [] });
  const source = JSON.stringify(entry.href.replace(/\.js$/, ".ts"));
  const loader = `import(${JSON.stringify(TYPESCRIPT_LOADER)}).then(({ tsImport }) => tsImport(${source}, ${JSON.stringify(entry.href)}));`;
  return new Worker(loader, { eval: true, execArgv: [] });
}
