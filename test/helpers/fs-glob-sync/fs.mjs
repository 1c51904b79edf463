// `node:fs` with Node 22's `globSync` (see preload.mjs). The suite calls it only to find its result
// files (`**/checks.json` under `cwd`), so it takes a pattern or patterns and `cwd`, and returns
// the matching files' paths relative to `cwd`, as Node 22 does.
import { globSync as glob } from "tinyglobby";

export * from "node:fs";
export { default } from "node:fs";

export function globSync(pattern, options = {}) {
  return glob(pattern, { cwd: options.cwd ?? process.cwd(), expandDirectories: false });
}
