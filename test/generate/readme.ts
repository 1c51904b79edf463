import { mcpTools } from "../../src/mcp/tools.js";
import { catalogue } from "../../tools/catalogue.js";

// The README's route and tool table, rendered from the catalogue: `npm run generate` writes it,
// test/unit/readme.test.ts fails when the committed README drifts from it.

export const README_PATH = new URL("../../README.md", import.meta.url);
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

/** `readme` with the table between its markers rendered afresh; undefined when it has no markers. */
export function withRouteTable(readme: string): string | undefined {
  const start = readme.indexOf(START);
  const end = readme.indexOf(END);
  if (start === -1 || end < start) return undefined;
  return `${readme.slice(0, start + START.length)}\n${routeTable()}\n${readme.slice(end)}`;
}
