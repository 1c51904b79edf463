// Preload (`node --import`) that lets the MCP conformance suite's CLI start on Node 20. The CLI
// imports `globSync` from `node:fs`, which arrived in Node 22; on Node 20 that import fails before
// any of its code runs. A built-in module's named exports cannot be added to from outside (they are
// fixed the first time anything loads it), so instead the suite's own `fs` imports are resolved to
// a module that is `node:fs` plus `globSync`. Nothing happens on a Node that has `globSync`.
import fs from "node:fs";
import { register } from "node:module";

if (!("globSync" in fs)) register("./hooks.mjs", import.meta.url);
