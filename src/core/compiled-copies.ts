import { readdirSync, statSync } from "node:fs";
import { join } from "node:path";

/**
 * Whether every TypeScript source under `sourceDir` has its compiled `.js` under `builtDir`, at
 * the same relative path, written no earlier than the source was last changed. A source edited,
 * added or checked out since the build, or a copy deleted, makes it false: what reads the copies
 * then falls back to the sources, never to a stale copy. (tsc leaves a copy's time alone when a
 * source was touched without a change, so that also reads as not current: slower, not wrong.)
 */
export function compiledCopiesCurrent(sourceDir: string, builtDir: string): boolean {
  return readdirSync(sourceDir, { recursive: true, encoding: "utf8" })
    .filter((path) => path.endsWith(".ts") && !path.endsWith(".d.ts"))
    .every((path) => {
      const copy = statSync(join(builtDir, path.replace(/\.ts$/, ".js")), { throwIfNoEntry: false });
      return copy !== undefined && copy.mtimeMs >= statSync(join(sourceDir, path)).mtimeMs;
    });
}
