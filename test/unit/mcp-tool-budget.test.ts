import { describe, expect, it } from "vitest";
import { mcpTools, type Toolset } from "../../src/mcp/tools.js";
import { catalogue } from "../../tools/catalogue.js";
import { roles } from "../../src/wire/roles.js";

// Issue 26: a tool list sits in every prompt of every session, so each set has a budget in tokens
// (characters / 4, as the MCP bench counts them), measured on what tools/list answers.

const BUDGETS: [Toolset, number][] = [
  ["core", 2_000],
  ["standard", 4_000],
];

const tokensOf = (toolset: Toolset, role?: (typeof roles)[number]): number =>
  Math.ceil(JSON.stringify({ tools: mcpTools(catalogue, toolset, role).map((tool) => tool.definition) }).length / 4);

describe("the size of each tool set", () => {
  it.each(BUDGETS)("%s fits in %i tokens, for every role", (toolset, budget) => {
    for (const role of [undefined, ...roles]) expect(tokensOf(toolset, role), `${toolset} as ${role ?? "anyone"}`).toBeLessThanOrEqual(budget);
  });

  it("keeps core to a dozen tools, and standard within the session's work", () => {
    expect(mcpTools(catalogue, "core").length).toBeLessThanOrEqual(12);
    const standard = mcpTools(catalogue, "standard").map((tool) => tool.name);
    expect(standard).toEqual(expect.arrayContaining(["memory_search", "memory_write", "memory_get", "memory_related", "decision_record", "capture_add", "compile_check"]));
    // Administration and dashboards wait for `all`.
    expect(standard.filter((name) => /^(agent|admin|archivist|project_(create|clear))_|_counts$|^memory_central$/.test(name))).toEqual([]);
  });

  it("lists an input it leaves unlisted nowhere, yet the tool still takes it", () => {
    const list = mcpTools(catalogue, "standard").find((tool) => tool.name === "memory_list");
    expect(Object.keys(list?.definition.inputSchema.properties ?? {})).not.toContain("min_distinct_readers");
    expect(Object.keys(list?.operation.input.shape ?? {})).toContain("min_distinct_readers");
  });
});
