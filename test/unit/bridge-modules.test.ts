import { join } from "node:path";
import { beforeAll, describe, expect, it } from "vitest";
import { commandGraph, type ModuleGraph } from "../helpers/module-graph.js";

// `cairn mcp` answers a host's `initialize` about as soon as node has started only while it loads
// next to nothing (docs/decisions.md, "The stdio bridge answers initialize at node's own start").

describe("the modules `cairn mcp` loads", () => {
  let graph: ModuleGraph;
  beforeAll(() => {
    graph = commandGraph("mcp");
  });

  it("are the bridge's own and node's, with eventsource-parser the one package", () => {
    expect(graph.modules.has(join("src", "mcp", "bridge.ts"))).toBe(true);
    const packages = [...graph.packages.keys()].filter((specifier) => !specifier.startsWith("node:"));
    expect(packages).toEqual(["eventsource-parser"]);
  });

  it("leave out the zod settings, the server and the MCP SDK", () => {
    const loaded = [...graph.modules.keys()];
    expect(loaded).not.toContain(join("src", "core", "config.ts"));
    expect(loaded).not.toContain(join("src", "app.ts"));
    expect(loaded.filter((file) => file.startsWith(join("src", "mcp", "")) && !/bridge|toolset-header/.test(file))).toEqual([]);
  });
});
