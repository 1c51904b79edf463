import { describe, expect, it } from "vitest";
import { z } from "zod";
import { catalogue } from "../../tools/catalogue.js";

// Bounded inputs, checked at the edge: every number an operation takes has a largest value, and
// every integer but an event's seq (a 64-bit column) fits the 32-bit columns it is compared with.
// A `min_version` of 2^53 once reached PostgreSQL and failed there with a 500.

interface Schema {
  type?: string;
  maximum?: number;
  properties?: Record<string, Schema>;
  items?: Schema;
  anyOf?: Schema[];
  oneOf?: Schema[];
  additionalProperties?: Schema | boolean;
}

const INT32_MAX = 2 ** 31 - 1;

/** Each number in the schema with its path: `operation.field[].field`. */
function numbers(schema: Schema, path: string): { path: string; schema: Schema }[] {
  const found = schema.type === "integer" || schema.type === "number" ? [{ path, schema }] : [];
  for (const [key, property] of Object.entries(schema.properties ?? {})) found.push(...numbers(property, `${path}.${key}`));
  if (schema.items) found.push(...numbers(schema.items, `${path}[]`));
  for (const branch of [...(schema.anyOf ?? []), ...(schema.oneOf ?? [])]) found.push(...numbers(branch, path));
  if (typeof schema.additionalProperties === "object") found.push(...numbers(schema.additionalProperties, `${path}{}`));
  return found;
}

const all = catalogue.flatMap((operation) => numbers(z.toJSONSchema(operation.input, { io: "input", unrepresentable: "any" }) as Schema, operation.name));

describe("the numbers operations take", () => {
  it("are found (the walk reaches nested fields)", () => {
    expect(all.map((number) => number.path)).toEqual(expect.arrayContaining(["memory_list.limit", "archivist_merge.sources[].version"]));
  });

  it("each have a largest value", () => {
    expect(all.filter((number) => number.schema.maximum === undefined).map((number) => number.path)).toEqual([]);
  });

  it("fit a 32-bit column when they are integers, an event's seq aside", () => {
    const wide = all.filter((number) => number.schema.type === "integer" && (number.schema.maximum ?? Infinity) > INT32_MAX && !/seq$/.test(number.path));
    expect(wide.map((number) => `${number.path} ≤ ${String(number.schema.maximum)}`)).toEqual([]);
  });
});
