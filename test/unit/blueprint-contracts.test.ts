import { describe, expect, it } from "vitest";
import { cachedValidators, compiledSchemas, outputProblems } from "../../src/services/blueprints/contracts.js";
import { checkParams, dependencyKeys, nodesInOrder, type NodeSlot } from "../../src/services/blueprints/plan.js";
import type { BlueprintDocument } from "../../src/wire/blueprints.js";

const schema = { type: "object", required: ["url"], properties: { url: { type: "string", minLength: 4 }, tags: { type: "array", items: { type: "string" }, maxItems: 2 } }, additionalProperties: false };

describe("output contracts", () => {
  it("reports each problem with its path under output", () => {
    expect(outputProblems(schema, { url: "x", tags: ["a", "b", 3], more: 1 }).map((problem) => problem.path).sort()).toEqual([
      "output.more",
      "output.tags",
      "output.tags.2",
      "output.url",
    ]);
    expect(outputProblems(schema, undefined)).toEqual([{ path: "output", message: "must be object" }]);
    expect(outputProblems(schema, { url: "https://x" })).toEqual([]);
  });

  it("compiles a schema once, whichever blueprint version and node carry it, and its every-problem form only for a failing output", () => {
    const other = { ...schema, title: "another" };
    const [cached, compiled] = [cachedValidators(), compiledSchemas()];
    expect(outputProblems(other, { url: "abcd" })).toEqual([]);
    expect(outputProblems(structuredClone(other), { url: "efgh" })).toEqual([]);
    expect([cachedValidators(), compiledSchemas()]).toEqual([cached + 1, compiled + 1]);
    for (let attempt = 0; attempt < 2; attempt++) expect(outputProblems(structuredClone(other), {})).toHaveLength(1);
    expect([cachedValidators(), compiledSchemas()]).toEqual([cached + 2, compiled + 2]);
  });
});

const document = {
  name: "plan",
  title: "plan",
  description: "",
  params: [
    { name: "region", type: "string", required: true, enum: ["eu", "us"] },
    { name: "count", type: "integer", required: false, default: 2 },
  ],
  nodes: [
    { id: "ship", title: "ship", needs: ["fan", "build"] },
    { id: "fan", title: "fan", needs: ["list"], foreach: { from: "list.output.items", max_items: 5 } },
    { id: "list", title: "list", needs: ["build"] },
    { id: "build", title: "build", needs: [] },
  ],
} as unknown as BlueprintDocument;

describe("planning", () => {
  it("checks params with their paths and fills defaults", () => {
    expect(checkParams(document, { region: "mars", other: true })).toEqual({
      ok: false,
      errors: [
        { path: "params.other", message: "not a param of this blueprint" },
        { path: "params.region", message: "must be one of the enum's values" },
      ],
    });
    expect(checkParams(document, {})).toMatchObject({ ok: false, errors: [{ path: "params.region", message: "required" }] });
    expect(checkParams(document, { region: "eu" })).toEqual({ ok: true, params: { region: "eu", count: 2 } });
  });

  it("orders nodes after their needs and resolves a need on a fan-out by its state", () => {
    expect(nodesInOrder(document).map((node) => node.id)).toEqual(["build", "list", "fan", "ship"]);
    const ship = document.nodes[0] as BlueprintDocument["nodes"][number];
    const slots = new Map<string, NodeSlot>([
      ["build", { state: "task", keys: ["build"] }],
      ["list", { state: "task", keys: ["list"] }],
      ["fan", { state: "pending" }],
    ]);
    expect(dependencyKeys(document, slots, ship).sort()).toEqual(["build", "list"]);
    slots.set("fan", { state: "task", keys: ["fan[0]", "fan[1]"] });
    expect(dependencyKeys(document, slots, ship).sort()).toEqual(["build", "fan[0]", "fan[1]"]);
    slots.set("fan", { state: "skipped" });
    expect(dependencyKeys(document, slots, ship).sort()).toEqual(["build", "list"]);
  });
});
