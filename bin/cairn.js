#!/usr/bin/env node
// Thin launcher: the compiled CLI lives in dist/ (built by `npm ci` through the prepare script).
import { existsSync } from "node:fs";
import { fileURLToPath } from "node:url";

const entry = new URL("../dist/src/cli.js", import.meta.url);
if (!existsSync(fileURLToPath(entry))) {
  process.stderr.write("cairn: not built yet; run `npm run build` in the checkout first\n");
  process.exit(1);
}
await import(entry.href);
