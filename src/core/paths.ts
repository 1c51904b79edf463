import { existsSync, readFileSync } from "node:fs";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";

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
/** The web UI as `npm run build` bundles it. */
export const uiDir = join(packageRoot, "dist", "ui");
