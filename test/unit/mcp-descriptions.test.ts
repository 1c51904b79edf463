import { describe, expect, it } from "vitest";
import { SERVER_INSTRUCTIONS } from "../../src/mcp/instructions.js";
import { mcpTools } from "../../src/mcp/tools.js";
import { catalogue } from "../../tools/catalogue.js";
import { descriptionsIn, mentionsHttp } from "../helpers/http-words.js";

describe("what a model reads about the tools", () => {
  const tools = mcpTools(catalogue, "all");

  it("speaks MCP, not HTTP: no status code, header, REST, route or query string in any tool", () => {
    const offending = tools.flatMap((tool) =>
      [tool.definition.description, ...descriptionsIn(tool.definition.inputSchema), ...descriptionsIn(tool.definition.outputSchema)]
        .filter(mentionsHttp)
        .map((text) => `${tool.name}: ${text}`),
    );
    expect(offending).toEqual([]);
    expect(mentionsHttp(SERVER_INSTRUCTIONS)).toBe(false);
  });

  it("recognises HTTP's words where they appear", () => {
    for (const text of [
      "The REST twin of the MCP `wait_for` tool.",
      "the others get 409 `task not open`",
      "(404 when unset)",
      "The ETag header carries its version, for If-Match on update.",
      "continue a listing from the X-Next-Cursor of the previous page",
      "With an Idempotency-Key a retry returns the same batch.",
      "`type=directive&scope=project&project=<id>` reads one project's directives.",
      "a custom event (POST /events)",
    ]) {
      expect(mentionsHttp(text), text).toBe(true);
    }
    for (const text of ["page size, 1 to 500 (default 50)", "Soft-delete up to 500 entries at once", "the oldest 200 changes at most", "Delete your agent."]) {
      expect(mentionsHttp(text), text).toBe(false);
    }
  });
});
