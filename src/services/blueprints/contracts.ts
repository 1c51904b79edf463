import { createHash } from "node:crypto";
import { createRequire } from "node:module";
import type { Ajv as AjvClass, ErrorObject, ValidateFunction } from "ajv";
import type { FieldError } from "../../core/errors.js";
import { schemaBoundProblem, OUTPUT_SCHEMA_LIMITS } from "./schema-bounds.js";

// Output contracts (CONTRACT §17): a node's `output_schema`, compiled once and kept by its text.
// The schema was held at save to a handful of keywords (no `$ref`, `format` or `pattern`) and to the
// bounds of schema-bounds.ts, and Ajv is strict and given no loader, so checking an output reads
// nothing and calls nothing outside the schema itself.
//
// `validateSchema: false`: save has already checked every keyword's value more narrowly than the
// meta-schema would, and skipping that pass (and the code optimiser's) makes a compile about three
// times cheaper; strict mode, which is what refuses a schema Ajv cannot take at its word, still runs.
//
// An output is checked first by a validator that stops at its first problem: its cost is one pass
// over the output at most. Listing every problem (`allErrors`) can cost the output's values times
// the schema's (an array of 20,000 `{}` against 200 required properties is four million problems),
// so it is done, by a second validator compiled when first needed, only while that product stays
// within DETAILED_CHECK_BUDGET; past it the first problem is the answer.

const options = { strict: true, validateSchema: false, code: { optimize: false } } as const;
type Mode = "first" | "every";
let instances: Record<Mode, AjvClass> | null = null;
/** Loaded with the first contract checked (ajv is CommonJS, so synchronously): a server that runs no blueprint with an output schema never loads it. */
function ajvFor(mode: Mode): AjvClass {
  if (!instances) {
    const { Ajv } = createRequire(import.meta.url)("ajv") as { Ajv: typeof AjvClass };
    instances = { first: new Ajv({ ...options, allErrors: false }), every: new Ajv({ ...options, allErrors: true }) };
  }
  return instances[mode];
}
/** Compiled validators kept; the least recently used goes first. */
const MAX_CACHED = 256;
const MAX_ERRORS = 50;
/** Output values × schema values past which only the first problem of an output is reported. */
const DETAILED_CHECK_BUDGET = 50_000;
// Ajv keeps every schema it compiled; each is removed from it when its validator leaves this cache.
const validators = new Map<string, { validate: ValidateFunction; schema: Record<string, unknown>; mode: Mode }>();
let compiles = 0;

/** The key of a schema: its text's hash, so a schema compiled at save is the one a completion uses. */
const keyOf = (schema: Record<string, unknown>): string => createHash("sha256").update(JSON.stringify(schema)).digest("base64url");

function compile(schema: Record<string, unknown>, mode: Mode): ValidateFunction {
  compiles += 1;
  try {
    return ajvFor(mode).compile(schema);
  } catch (error) {
    ajvFor(mode).removeSchema(schema);
    throw error;
  }
}

function validatorFor(schema: Record<string, unknown>, mode: Mode): ValidateFunction {
  const key = `${mode}:${keyOf(schema)}`;
  const known = validators.get(key);
  if (known) {
    validators.delete(key);
    validators.set(key, known);
    return known.validate;
  }
  const validate = compile(schema, mode);
  validators.set(key, { validate, schema, mode });
  for (const [oldest, entry] of validators) {
    if (validators.size <= MAX_CACHED) break;
    validators.delete(oldest);
    ajvFor(entry.mode).removeSchema(entry.schema);
  }
  return validate;
}

const pathOf = (error: ErrorObject): string => {
  const pointer = error.instancePath.split("/").slice(1).map((part) => part.replace(/~1/g, "/").replace(/~0/g, "~"));
  if (error.keyword === "required") pointer.push(String((error.params as { missingProperty?: unknown }).missingProperty));
  if (error.keyword === "additionalProperties") pointer.push(String((error.params as { additionalProperty?: unknown }).additionalProperty));
  return ["output", ...pointer].join(".");
};

/**
 * The problems of `output` against a node's schema, each with its path under `output`. A schema
 * past the bounds (saved before they applied) is never compiled: the node's contract cannot be
 * checked, which is a problem of its own.
 */
export function outputProblems(schema: Record<string, unknown>, output: unknown): FieldError[] {
  const budget = { values: OUTPUT_SCHEMA_LIMITS.values };
  const bound = schemaBoundProblem(schema, "output_schema", budget);
  if (bound) return [{ path: bound.path, message: `the node's output schema is too large to check (${bound.message}): save a new version of the blueprint` }];
  const value = output === undefined ? null : output;
  const first = validatorFor(schema, "first");
  if (first(value)) return [];
  const schemaValues = OUTPUT_SCHEMA_LIMITS.values - budget.values;
  const validate = valuesWithin(value, Math.floor(DETAILED_CHECK_BUDGET / schemaValues)) ? validatorFor(schema, "every") : first;
  if (validate !== first) validate(value);
  return (validate.errors ?? []).slice(0, MAX_ERRORS).map((error) => ({ path: pathOf(error), message: error.message ?? "does not match the schema" }));
}

/** Whether a JSON value holds at most `limit` values (itself, and everything inside it); stops counting past it. */
function valuesWithin(value: unknown, limit: number): boolean {
  const pending: unknown[] = [value];
  let count = 1;
  while (pending.length > 0) {
    const next = pending.pop();
    if (typeof next !== "object" || next === null) continue;
    const inside = Array.isArray(next) ? next : Object.values(next);
    count += inside.length;
    if (count > limit) return false;
    for (const item of inside) pending.push(item);
  }
  return true;
}

/**
 * Why Ajv would not compile a schema (strict mode refuses what it cannot take at its word, such
 * as `required` names no `properties` declare), or null: asked at save, so a completion never
 * meets a schema it cannot check. The caller has checked the schema's bounds. A schema that
 * compiles stays cached for its completions.
 */
export function schemaCompileProblem(schema: Record<string, unknown>): string | null {
  try {
    validatorFor(schema, "first");
    return null;
  } catch (error) {
    return error instanceof Error ? error.message.replace(/^strict mode: /, "") : "not a schema Ajv can check";
  }
}

/** How many validators are cached, and how many schemas Ajv has compiled in this process (for tests of the bounds and the cache). */
export const cachedValidators = (): number => validators.size;
export const compiledSchemas = (): number => compiles;
