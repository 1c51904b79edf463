// Module resolution hooks (see preload.mjs): only the conformance package's `fs` is replaced, so
// nothing else in the process (tinyglobby included) sees a different `node:fs`.
const FS_WITH_GLOB_SYNC = new URL("./fs.mjs", import.meta.url).href;
const SUITE = "/node_modules/@modelcontextprotocol/conformance/";

export async function resolve(specifier, context, nextResolve) {
  if ((specifier === "fs" || specifier === "node:fs") && context.parentURL?.includes(SUITE)) return { url: FS_WITH_GLOB_SYNC, shortCircuit: true };
  return nextResolve(specifier, context);
}
