import { describe, expect, it } from "vitest";
import { OUTPUT_SCHEMA_LIMITS, schemaBoundProblem } from "../../src/services/blueprints/schema-bounds.js";
import { placeholders, renderTemplate, scanPlaceholders } from "../../src/services/blueprints/template.js";

// Issue 25, item 3: what a blueprint may hold is sized in one cheap pass before anything grows
// with it — output schemas before Ajv compiles them, templates in one scan.

/** An array whose element reads are counted: how much of it a walk looked at. */
function counted<T>(items: T[]): { array: T[]; reads: () => number } {
  let reads = 0;
  const array = new Proxy(items, {
    get(target, key, receiver) {
      if (typeof key === "string" && /^\d+$/.test(key)) reads += 1;
      return Reflect.get(target, key, receiver) as unknown;
    },
  });
  return { array, reads: () => reads };
}

const budget = (values: number = OUTPUT_SCHEMA_LIMITS.documentValues) => ({ values });

describe("an output schema's bounds", () => {
  it("refuses an enum past 100 values without reading one of them", () => {
    const { array, reads } = counted(Array.from({ length: 8000 }, (_, index) => ({ k: index })));
    const problem = schemaBoundProblem({ type: "object", properties: { pick: { enum: array } } }, "output_schema", budget());
    expect(problem).toEqual({ path: "output_schema.properties.pick.enum", message: "an enum holds at most 100 values" });
    expect(reads()).toBe(0);
  });

  it("stops counting at the 301st value, however many follow", () => {
    const { array, reads } = counted(Array.from({ length: 50_000 }, (_, index) => index));
    expect(schemaBoundProblem({ const: array }, "s", budget())?.message).toMatch(/^an output schema holds at most 300 values/);
    expect(reads()).toBe(0);
    const nested = { type: "object", properties: Object.fromEntries(Array.from({ length: 200 }, (_, index) => [`p${index}`, { type: "string" }])) };
    expect(schemaBoundProblem(nested, "s", budget())?.path).toBe("s");
  });

  it("bounds nesting, strings and property names, each at its path", () => {
    let deep: unknown = "leaf";
    for (let level = 0; level < 12; level++) deep = [deep];
    expect(schemaBoundProblem({ const: deep }, "s", budget())).toEqual({ path: `s.const${".0".repeat(11)}`, message: "nested more than 12 deep" });
    expect(schemaBoundProblem({ title: "x".repeat(2001) }, "s", budget())).toEqual({ path: "s.title", message: "at most 2000 characters" });
    expect(schemaBoundProblem({ properties: { ["k".repeat(2001)]: {} } }, "s", budget())).toEqual({ path: "s.properties", message: "property names of at most 2000 characters" });
  });

  it("charges a document's budget with what each schema holds, and refuses the schema that passes it", () => {
    const shared = budget(10);
    expect(schemaBoundProblem({ type: "object", properties: { a: { type: "string" } } }, "first", shared)).toBeNull();
    expect(shared.values).toBe(5);
    expect(schemaBoundProblem({ type: "array", items: { type: "string" }, minItems: 1, maxItems: 3 }, "second", shared)).toEqual({
      path: "second",
      message: `a blueprint's output schemas hold at most ${OUTPUT_SCHEMA_LIMITS.documentValues} values together`,
    });
  });
});

/** The placeholders as the lazy regular expression the scanner replaced found them: a reference on small inputs. */
function byRegex(template: string): string[] {
  return [...template.matchAll(/\{\{(.*?)\}\}/g)].map((match) => match[0]);
}

describe("the placeholder scanner", () => {
  it("finds what the lazy regular expression found, spans and all", () => {
    const cases = [
      "plain",
      "{{a}}",
      "{{ a.b }} and {{c}}",
      "{{{a}}}",
      "{{a {{b}}",
      "{{}}",
      "{{a}}}}",
      "{{ a\n}} {{b}}",
      "{{\n{{\n{{c}}",
      "x {{ a }",
      "{{a}} {{ b | upper }} {{",
      "{{a\u2028b}} {{c}}",
      "}}{{a}}{{",
    ];
    for (const template of cases) {
      const spans = scanPlaceholders(template).map((span) => template.slice(span.start, span.end));
      expect(spans, JSON.stringify(template)).toEqual(byRegex(template));
    }
    expect(placeholders("a {{b.c}} {{ d }} {{e f}}")).toEqual({ paths: [["b", "c"], ["d"]], malformed: ["{{e f}}"] });
  });

  it("keeps a placeholder on one line, in what it renders too", () => {
    expect(renderTemplate("{{params.a\n}} {{ params.a }}", { params: { a: "x" } }, 100)).toBe("{{params.a\n}} x");
  });

  it("reads a megabyte of unclosed {{, with or without line breaks, as text", () => {
    for (const unit of ["{{", "{{\n", "{{ a", "{{}"]) {
      const template = unit.repeat(Math.floor(1_048_576 / unit.length));
      expect(scanPlaceholders(template).filter((span) => span.path !== null)).toEqual([]);
      expect(renderTemplate(template, {}, 2_000_000)).toBe(template);
    }
  });
});
