// Bundles the web UI into dist/ui: app.js (minified, with a source map), index.html and styles.css.
import { build } from "esbuild";
import { copyFileSync, mkdirSync } from "node:fs";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";

const uiDir = dirname(fileURLToPath(import.meta.url));
const outDir = join(uiDir, "..", "dist", "ui");

mkdirSync(outDir, { recursive: true });
await build({
  entryPoints: [join(uiDir, "src", "main.tsx")],
  outfile: join(outDir, "app.js"),
  bundle: true,
  format: "esm",
  target: "es2022",
  minify: true,
  sourcemap: true,
  jsx: "automatic",
  jsxImportSource: "preact",
  legalComments: "none",
  logLevel: "warning",
});
for (const file of ["index.html", "styles.css"]) copyFileSync(join(uiDir, file), join(outDir, file));
