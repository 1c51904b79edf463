import { Ajv, type ErrorObject, type ValidateFunction } from "ajv";
import type { FieldError } from "../../core/errors.js";

// Output contracts (CONTRACT §17): a node's `output_schema`, compiled once per blueprint version
// and node. The schema was held at save to a handful of keywords (no `$ref`, `format` or
// `pattern`), and Ajv is strict and given no loader, so checking an output reads nothing and calls
// nothing outside the schema itself.

const ajv = new Ajv({ strict: true, allErrors: true });
const MAX_CACHED = 2000;
const validators = new Map<string, ValidateFunction>();

function validatorFor(key: string, schema: Record<string, unknown>): ValidateFunction {
  const known = validators.get(key);
  if (known) return known;
  // A blueprint version never changes, so a cached validator never goes stale; the cap keeps the
  // map bounded when many versions are in play.
  if (validators.size >= MAX_CACHED) validators.clear();
  const compiled = ajv.compile(schema);
  validators.set(key, compiled);
  return compiled;
}

const pathOf = (error: ErrorObject): string => {
  const pointer = error.instancePath.split("/").slice(1).map((part) => part.replace(/~1/g, "/").replace(/~0/g, "~"));
  if (error.keyword === "required") pointer.push(String((error.params as { missingProperty?: unknown }).missingProperty));
  if (error.keyword === "additionalProperties") pointer.push(String((error.params as { additionalProperty?: unknown }).additionalProperty));
  return ["output", ...pointer].join(".");
};

/** The problems of `output` against a node's schema, each with its path under `output`. */
export function outputProblems(cacheKey: string, schema: Record<string, unknown>, output: unknown): FieldError[] {
  const validate = validatorFor(cacheKey, schema);
  if (validate(output === undefined ? null : output)) return [];
  return (validate.errors ?? []).slice(0, 50).map((error) => ({ path: pathOf(error), message: error.message ?? "does not match the schema" }));
}

/**
 * Why Ajv would not compile a schema (strict mode refuses what it cannot take at its word, such
 * as `required` names no `properties` declare), or null: asked at save, so a completion never
 * meets a schema it cannot check.
 */
export function schemaCompileProblem(schema: Record<string, unknown>): string | null {
  try {
    ajv.compile(schema);
    return null;
  } catch (error) {
    return error instanceof Error ? error.message.replace(/^strict mode: /, "") : "not a schema Ajv can check";
  }
}

/** How many validators are cached (for tests of the cache). */
export const cachedValidators = (): number => validators.size;
