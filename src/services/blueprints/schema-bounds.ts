import type { FieldError } from "../../core/errors.js";

// How large an output schema may be (issue 25). Ajv turns a schema into code: compiling costs some
// hundredths of a millisecond per value of the schema, and an `enum` of objects costs its square,
// so an 8,000-object enum held the event loop for seconds at every completion. These bounds keep
// the first completion against a schema (two compiles and a 64 KiB output checked) to about 20 ms,
// and a save (which compiles every schema of the document) to about 30 ms; they are counted by one
// walk that stops at the first value past them, before Ajv ever sees the schema.

export const OUTPUT_SCHEMA_LIMITS = {
  /** Values (objects, arrays, strings, numbers, booleans, nulls) in one output schema, enum values included. */
  values: 300,
  /** The same across every output schema of one blueprint document: what saving it compiles. */
  documentValues: 1000,
  /** Values of one `enum`. */
  enumValues: 100,
  /** Objects and arrays nested in one another, the schema itself the first. */
  depth: 12,
  /** Characters of any string in a schema, property names included. */
  stringChars: 2000,
} as const;

interface Visit {
  value: unknown;
  /** The key or index it sits under; null for the schema itself. */
  key: string | null;
  parent: Visit | null;
  depth: number;
}

/** A visit's path, built only when a problem is reported: building one per value would cost depth × key length each. */
function pathOf(root: string, visit: Visit): string {
  const keys: string[] = [];
  for (let at: Visit | null = visit; at !== null; at = at.parent) if (at.key !== null) keys.push(at.key);
  return [root, ...keys.reverse()].join(".");
}

/**
 * The first bound a schema passes, or null; `budget` is what is left of the document's values and
 * is charged with this schema's. Stops at the first value past a bound, so a hostile schema costs
 * at most the bound's worth of visits (and one look at each key of the object being visited).
 */
export function schemaBoundProblem(schema: unknown, path: string, budget: { values: number }): FieldError | null {
  const limits = OUTPUT_SCHEMA_LIMITS;
  const pending: Visit[] = [{ value: schema, key: null, parent: null, depth: 1 }];
  const tooMany = { path, message: `an output schema holds at most ${limits.values} values (objects, arrays and scalars, enum values included)` };
  let values = 0;
  for (let visit = pending.pop(); visit !== undefined; visit = pending.pop()) {
    values += 1;
    if (values > limits.values) return tooMany;
    if (values > budget.values) return { path, message: `a blueprint's output schemas hold at most ${limits.documentValues} values together` };
    const { value } = visit;
    if (typeof value === "string") {
      if (value.length > limits.stringChars) return { path: pathOf(path, visit), message: `at most ${limits.stringChars} characters` };
      continue;
    }
    if (typeof value !== "object" || value === null) continue;
    if (visit.depth > limits.depth) return { path: pathOf(path, visit), message: `nested more than ${limits.depth} deep` };
    if (Array.isArray(value)) {
      if (visit.key === "enum" && value.length > limits.enumValues) return { path: pathOf(path, visit), message: `an enum holds at most ${limits.enumValues} values` };
      if (value.length > limits.values) return tooMany;
      for (let index = value.length - 1; index >= 0; index--) pending.push({ value: value[index], key: String(index), parent: visit, depth: visit.depth + 1 });
      continue;
    }
    const keys = Object.keys(value);
    if (keys.length > limits.values) return tooMany;
    for (let index = keys.length - 1; index >= 0; index--) {
      const key = keys[index] as string;
      if (key.length > limits.stringChars) return { path: pathOf(path, visit), message: `property names of at most ${limits.stringChars} characters` };
      pending.push({ value: (value as Record<string, unknown>)[key], key, parent: visit, depth: visit.depth + 1 });
    }
  }
  budget.values -= values;
  return null;
}
