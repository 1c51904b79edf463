// Compiles the WebAssembly text files under src/ to binaries beside the compiler's output in
// dist/src (src/store/sqlite/row-scan.wat → dist/src/store/sqlite/row-scan.wasm), with wabt.
import { mkdirSync, readdirSync, readFileSync, writeFileSync } from "node:fs";
import { dirname, join, relative } from "node:path";
import { fileURLToPath } from "node:url";
import initWabt from "wabt";

const root = join(dirname(fileURLToPath(import.meta.url)), "..");
const src = join(root, "src");
const wabt = await initWabt();
for (const entry of readdirSync(src, { recursive: true, withFileTypes: true })) {
  if (!entry.isFile() || !entry.name.endsWith(".wat")) continue;
  const path = join(entry.parentPath, entry.name);
  const module = wabt.parseWat(path, readFileSync(path, "utf8"), { simd: true });
  try {
    module.validate();
    const target = join(root, "dist", "src", relative(src, path).replace(/\.wat$/, ".wasm"));
    mkdirSync(dirname(target), { recursive: true });
    writeFileSync(target, module.toBinary({}).buffer);
  } finally {
    module.destroy();
  }
}
