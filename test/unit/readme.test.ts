import { readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { mcpTools } from "../../src/mcp/tools.js";
import { catalogue } from "../../tools/catalogue.js";

const readmePath = join(import.meta.dirname, "..", "..", "README.md");
const START = "<!-- routes:start -->";
const END = "<!-- routes:end -->";

/** The smallest MCP tool set that lists each tool. */
function toolTiers(): Map<string, string> {
  const tiers = new Map<string, string>();
  for (const set of ["all", "standard", "core"] as const) for (const tool of mcpTools(catalogue, set)) tiers.set(tool.operation.name, `\`${tool.name}\` (${set})`);
  return tiers;
}

/** The README's route and tool table, rendered from the catalogue. */
function routeTable(): string {
  const tiers = toolTiers();
  const rows = catalogue.map((operation) => {
    const paths = [operation.http.path, ...(operation.http.aliases ?? [])]
      .map((path) => `\`${path.replace(/:([a-z_]+)/g, "{$1}")}\``)
      .join(", ");
    return `| ${operation.http.method} | ${paths} | ${tiers.get(operation.name) ?? "—"} | ${operation.title} |`;
  });
  return ["| Method | Path | MCP tool (listed from set) | |", "|---|---|---|---|", ...rows].join("\n");
}

describe("README", () => {
  it("lists every operation of the catalogue with its route and MCP tool (regenerate with UPDATE_README=1)", () => {
    const readme = readFileSync(readmePath, "utf8");
    const start = readme.indexOf(START);
    const end = readme.indexOf(END);
    expect(start).toBeGreaterThan(-1);
    expect(end).toBeGreaterThan(start);
    const expected = routeTable();
    if (process.env.UPDATE_README) {
      writeFileSync(readmePath, `${readme.slice(0, start + START.length)}\n${expected}\n${readme.slice(end)}`);
      return;
    }
    expect(readme.slice(start + START.length, end).trim()).toBe(expected);
  });

  it("opens with the install-and-run and the test commands", () => {
    const readme = readFileSync(readmePath, "utf8");
    const firstBlock = readme.slice(readme.indexOf("```"), readme.indexOf("```", readme.indexOf("```") + 3));
    expect(firstBlock).toContain("npm ci && npm start");
    expect(firstBlock).toContain("npm test");
  });
});
