import { describe, expect, it } from "vitest";
import { durationMs } from "../../src/services/blueprints/duration.js";
import { renderNode } from "../../src/services/blueprints/plan.js";
import { placeholders, renderTemplate } from "../../src/services/blueprints/template.js";
import { TASK_TITLE_MAX } from "../../src/wire/tasks.js";
import type { FieldError } from "../../src/core/errors.js";
import { validateBlueprint } from "../../src/services/blueprints/validate.js";

// CONTRACT §17: every rule of a blueprint document, each reported with its path, all at once.

const release = () => ({
  name: "release",
  title: "Release a version",
  params: [
    { name: "version", type: "string", required: true },
    { name: "regions", type: "array", default: ["eu", "us"] },
  ],
  nodes: [
    { id: "build", title: "Build {{params.version}}", output_schema: { type: "object", properties: { artifacts: { type: "array", items: { type: "string" } } }, required: ["artifacts"] } },
    { id: "test", title: "Test {{params.version}}", needs: ["build"], done_check: [{ kind: "memory", tag: "test-report" }] },
    { id: "publish", title: "Publish {{item}} ({{index}}) of run {{run.id}}", needs: ["test"], foreach: { from: "build.output.artifacts", max_items: 20 } },
    { id: "deploy", title: "Deploy to {{item}}", needs: ["publish"], foreach: { from: "params.regions", max_items: 10 } },
    { id: "approve", title: "Approve {{params.version}}", needs: ["deploy"], gate: { kind: "human", title: "Ship {{params.version}}?" } },
    { id: "wait", title: "Let it soak", needs: ["approve"], gate: { kind: "timer", after: "P1DT12H" } },
    { id: "announce", title: "Announce", description: "Built {{nodes.build.output.artifacts}}", needs: ["wait"], on_fail: "retry", max_attempts: 3 },
  ],
});

function problemsOf(document: unknown): FieldError[] {
  const result = validateBlueprint(document);
  return result.ok ? [] : result.problems;
}

/** A copy of the release plan with `change` applied to it. */
function changed(change: (document: ReturnType<typeof release>) => void): unknown {
  const document = release();
  change(document);
  return document;
}

describe("a blueprint document", () => {
  it("accepts a plan that uses every part: params, fan-out from a param and from an output, gates, checks, retries", () => {
    const result = validateBlueprint(release());
    expect(result.ok).toBe(true);
    if (result.ok) expect(result.document.nodes.map((node) => node.needs)).toEqual([[], ["build"], ["test"], ["publish"], ["deploy"], ["approve"], ["wait"]]);
  });

  it("reports every problem at once, each with its path", () => {
    const problems = problemsOf(
      changed((document) => {
        document.nodes[1]!.needs = ["nowhere"];
        document.nodes.push({ id: "build", title: "Again" } as never);
        document.nodes[6]!.title = "Announce {{params.nope}}";
      }),
    );
    expect(problems).toEqual(
      expect.arrayContaining([
        { path: "nodes.7.id", message: "duplicate node id build" },
        { path: "nodes.1.needs.0", message: "unknown node nowhere" },
        { path: "nodes.6.title", message: "no such param: params.nope" },
      ]),
    );
  });

  it("names a cycle along its nodes, and wants a root", () => {
    const cycle = { name: "loop", title: "Loop", nodes: [{ id: "a", title: "A", needs: ["b"] }, { id: "b", title: "B", needs: ["a"] }, { id: "c", title: "C" }] };
    expect(problemsOf(cycle)).toEqual([{ path: "nodes", message: "blueprint has a cycle: a → b → a" }]);
    const self = { name: "self", title: "Self", nodes: [{ id: "a", title: "A", needs: ["a"] }] };
    expect(problemsOf(self)).toEqual(expect.arrayContaining([{ path: "nodes.0.needs.0", message: "a node cannot need itself" }]));
    expect(problemsOf({ name: "empty", title: "Empty", nodes: [] })[0]?.path).toBe("nodes");
  });

  it("takes a foreach source only from an array param or an ancestor's declared array output, never nested", () => {
    const from = (source: string) => changed((document) => (document.nodes[2]!.foreach = { from: source, max_items: 5 }));
    expect(problemsOf(from("params.version"))).toEqual([{ path: "nodes.2.foreach.from", message: "param version is not an array" }]);
    expect(problemsOf(from("params.missing"))).toEqual([{ path: "nodes.2.foreach.from", message: "no such param: params.missing" }]);
    expect(problemsOf(from("announce.output.list"))).toEqual([{ path: "nodes.2.foreach.from", message: "announce is not a node this one needs, directly or through others" }]);
    expect(problemsOf(from("build.output.other"))).toEqual([{ path: "nodes.2.foreach.from", message: "build's output_schema does not declare output.other as an array" }]);
    expect(problemsOf(from("build"))).toEqual([{ path: "nodes.2.foreach.from", message: 'must be "params.<name>" or "<ancestor>.output.<path>"' }]);
    const nested = changed((document) => (document.nodes[3]!.foreach = { from: "publish.output.list", max_items: 5 }));
    expect(problemsOf(nested)).toEqual([{ path: "nodes.3.foreach.from", message: "publish is itself a foreach node: fan-out does not nest" }]);
  });

  it("resolves every placeholder to params, the item, the run or an ancestor's output", () => {
    const titled = (title: string, node = 1) => problemsOf(changed((document) => (document.nodes[node]!.title = title)));
    expect(titled("Test {{item}}")).toEqual([{ path: "nodes.1.title", message: "item exists only in a foreach node" }]);
    expect(titled("Test {{run.status}}")).toEqual([{ path: "nodes.1.title", message: "only run.id is known of the run" }]);
    expect(titled("Test {{nodes.announce.output.x}}")).toEqual([{ path: "nodes.1.title", message: "announce is not a node this one needs, directly or through others" }]);
    expect(titled("Test {{env.HOME}}")[0]?.message).toMatch(/^unknown placeholder \{\{env\.HOME\}\}/);
    expect(titled("Test {{ params.version | upper }}")).toEqual([{ path: "nodes.1.title", message: "malformed placeholder {{ params.version | upper }}" }]);
    expect(titled("Test {{constructor.constructor}}")[0]?.message).toMatch(/^unknown placeholder/);
    expect(titled("Publish {{item.name}} #{{index}}", 2)).toEqual([]);
  });

  it("allows only the listed keywords in an output schema, at any depth", () => {
    const schema = (outputSchema: unknown) => problemsOf(changed((document) => (document.nodes[0]!.output_schema = outputSchema as never)));
    expect(schema({ type: "object", properties: { url: { type: "string", pattern: "^https" } } })).toEqual(expect.arrayContaining([expect.objectContaining({ path: "nodes.0.output_schema.properties.url.pattern" })]));
    expect(schema({ $ref: "#/definitions/x" })[0]?.path).toBe("nodes.0.output_schema.$ref");
    expect(schema({ type: "string", format: "uri" })[0]?.path).toBe("nodes.0.output_schema.format");
    expect(schema({ type: "array", items: { type: "thing" } })).toEqual(expect.arrayContaining([{ path: "nodes.0.output_schema.items.type", message: "must be a JSON Schema type" }]));
    // Allowed keywords Ajv's strict mode still cannot check: refused at save, never at completion.
    expect(schema({ type: "object", required: ["ticket"] })).toContainEqual({ path: "nodes.0.output_schema", message: 'required property "ticket" is not defined at "#" (strictRequired)' });
  });

  it("checks gates, checks, params and retries", () => {
    const node = (index: number, fields: Record<string, unknown>) => problemsOf(changed((document) => Object.assign(document.nodes[index]!, fields)));
    expect(node(5, { gate: { kind: "timer", after: "P31D" } })).toEqual([{ path: "nodes.5.gate.after", message: "must be at most 30 days" }]);
    expect(node(5, { gate: { kind: "timer", after: "P1M" } })[0]?.path).toBe("nodes.5.gate.after");
    expect(node(5, { gate: { kind: "timer", after: "PT0S" } })[0]?.path).toBe("nodes.5.gate.after");
    expect(node(1, { done_check: [{ kind: "memory" }] })).toEqual([{ path: "nodes.1.done_check.0", message: "a memory check needs a tag, a query or both" }]);
    expect(node(1, { done_check: [{ kind: "shell", command: "rm -rf /" }] })[0]?.path).toBe("nodes.1.done_check.0.kind");
    expect(node(1, { max_attempts: 2 })).toEqual([{ path: "nodes.1.max_attempts", message: 'applies only with on_fail "retry"' }]);
    expect(node(1, { max_attempts: 6, on_fail: "retry" })[0]?.path).toBe("nodes.1.max_attempts");
    const params = problemsOf(changed((document) => document.params.push({ name: "version", type: "integer", default: "x", enum: [1, "two"] } as never)));
    expect(params).toEqual(
      expect.arrayContaining([
        { path: "params.2.name", message: "duplicate param version" },
        { path: "params.2.default", message: "must be of type integer" },
        { path: "params.2.enum.1", message: "must be of type integer" },
      ]),
    );
  });

  it("bounds the plan: 100 nodes, 500 tasks a run, 256 KiB", () => {
    const many = (count: number, maxItems?: number) => ({
      name: "big",
      title: "Big",
      params: [{ name: "list", type: "array" }],
      nodes: Array.from({ length: count }, (_, index) => ({ id: `n${index}`, title: `Node ${index}`, ...(maxItems ? { foreach: { from: "params.list", max_items: maxItems } } : {}) })),
    });
    expect(problemsOf(many(100))).toEqual([]);
    expect(problemsOf(many(101))).toEqual([{ path: "nodes", message: "at most 100 nodes" }]);
    expect(problemsOf(many(10, 50))).toEqual([]);
    expect(problemsOf(many(11, 50))).toEqual([{ path: "nodes", message: "a run could make 550 tasks; at most 500" }]);
    expect(problemsOf({ ...release(), description: "x".repeat(256 * 1024) })).toEqual([{ path: "", message: "the document exceeds 256 KiB" }]);
  });
});

describe("the template renderer", () => {
  it("looks values up by name and does nothing else", () => {
    const context = { params: { version: "2.1", regions: ["eu", "us"], flags: { fast: true } }, item: { name: "cli" }, index: 2, run: { id: "r1" } };
    expect(renderTemplate("Ship {{params.version}} to {{ params.regions }} ({{params.flags.fast}}) #{{index}}: {{item.name}} in {{run.id}}", context, 200)).toBe(
      'Ship 2.1 to ["eu","us"] (true) #2: cli in r1',
    );
    expect(renderTemplate("Missing {{params.nope}} and {{item.name.length}}", context, 200)).toBe("Missing  and ");
    expect(renderTemplate("{{params.constructor}}{{params.__proto__}}", context, 200)).toBe("");
    expect(renderTemplate("{{ params.version | upper }} stays", context, 200)).toBe("{{ params.version | upper }} stays");
    expect(renderTemplate("x".repeat(10) + "{{params.version}}", context, 8)).toBe("xxxxxxx…");
    expect(placeholders("a {{b.c}} {{ d }} {{e f}}")).toEqual({ paths: [["b", "c"], ["d"]], malformed: ["{{e f}}"] });
  });

  it("renders a task's title up to the length a task's title may have, however long its values", () => {
    const context = { params: { long: "y".repeat(1000) }, run: { id: "r1" }, nodes: {} };
    const { title } = renderNode({ id: "n", title: "Ship {{params.long}}", needs: [] }, "bp", context);
    expect(title).toHaveLength(TASK_TITLE_MAX);
    expect(title.endsWith("y…")).toBe(true);
  });

  it("reads ISO 8601 durations of fixed length", () => {
    expect(durationMs("PT2H")).toBe(7_200_000);
    expect(durationMs("P1DT12H")).toBe(129_600_000);
    expect(durationMs("P2W")).toBe(1_209_600_000);
    expect(durationMs("PT1.5S")).toBe(1500);
    for (const bad of ["P", "PT", "P1M", "P1Y", "2H", "PT-1H", "P1DT"]) expect(durationMs(bad), bad).toBeNull();
  });
});
