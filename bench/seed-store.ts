// Child-process entry of the seeding step: `node --import tsx bench/seed-store.ts ENTRIES`.
import { progress } from "./lib.js";
import { buildCachedStore } from "./seed.js";

const entries = Number(process.argv[2]);
if (!Number.isInteger(entries) || entries < 1) {
  console.error("usage: node --import tsx bench/seed-store.ts ENTRIES");
  process.exit(2);
}
await buildCachedStore(entries, progress);
