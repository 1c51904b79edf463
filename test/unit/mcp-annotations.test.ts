import { describe, expect, it } from "vitest";
import { mcpTools } from "../../src/mcp/tools.js";
import { catalogue } from "../../tools/catalogue.js";

describe("the hints a tool gives an MCP host (annotations)", () => {
  const hints = new Map(mcpTools(catalogue, "all").map((tool) => [tool.operation.name, tool.definition.annotations]));

  // Only hints that differ from MCP's defaults (not read-only, destructive, not idempotent, open world) are listed.
  it.each([
    ["a read", "memory_search", { readOnlyHint: true, openWorldHint: false }],
    ["a create", "memory_write", { destructiveHint: false, openWorldHint: false }],
    ["an update", "memory_update", { destructiveHint: false, idempotentHint: true, openWorldHint: false }],
    ["a delete", "memory_delete", { idempotentHint: true, openWorldHint: false }],
    ["a merge, which soft-deletes its sources", "archivist_merge", { openWorldHint: false }],
    ["a key rotation, after which the old key no longer works", "agent_rotate_key", { openWorldHint: false }],
  ])("gives %s (%s) the hints %j", (_what, name, expected) => {
    expect(hints.get(name)).toEqual(expected);
  });

  it("lists no operation marked destructive (every delete, the merge, the key rotation) as destructiveHint: false", () => {
    const destructive = catalogue.filter((operation) => operation.destructive).map((operation) => operation.name);
    expect(destructive).toEqual(expect.arrayContaining(["memory_delete", "archivist_merge", "agent_rotate_key"]));
    expect(destructive.filter((name) => hints.get(name)?.destructiveHint === false)).toEqual([]);
  });
});
