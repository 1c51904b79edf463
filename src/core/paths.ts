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
/** The built command-line entry (`bin/cairn` runs it). */
export const cliPath = join(packageRoot, "dist", "src", "cli.js");
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
