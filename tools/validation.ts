import { z } from "zod";
import { AppError, invalidFields, type ErrorCode } from "../src/core/errors.js";

/** The mark of an issue that answers with its own code rather than as a 422 entry. */
const REFUSAL = "refusal";

/**
 * Fails a value with a whole-request answer instead of a 422 entry: for the few values the
 * contract answers otherwise (an unparsable If-Match is 400). Returns `z.NEVER` for the transform
 * or refinement to return.
 */
export function refuse(context: z.RefinementCtx, code: ErrorCode, detail: string): never {
  context.addIssue({ code: "custom", message: detail, params: { [REFUSAL]: code } });
  return z.NEVER;
}

function refusalOf(issue: z.core.$ZodIssue): ErrorCode | undefined {
  return issue.code === "custom" ? (issue.params?.[REFUSAL] as ErrorCode | undefined) : undefined;
}

/**
 * The answer to input its schema refused: 422 with a path per problem (under `at`). A refusal
 * answers only when nothing else is wrong, so a request with ordinary problems gets the same 422
 * whether or not a refused value rides along.
 */
export function validationError(issues: readonly z.core.$ZodIssue[], at: readonly string[] = []): AppError {
  const ordinary = issues.filter((issue) => refusalOf(issue) === undefined);
  const [first] = issues;
  const refusal = first && refusalOf(first);
  if (ordinary.length === 0 && first && refusal) return new AppError(refusal, first.message);
  return invalidFields(
    ordinary.flatMap((issue) => {
      const path = [...at, ...issue.path.map(String)];
      // One error per unknown field, each at its own path.
      if (issue.code === "unrecognized_keys") return issue.keys.map((key) => ({ path: [...path, key].join("."), message: "unknown field" }));
      return [{ path: path.join("."), message: issue.message }];
    }),
  );
}

/** Parses a value that is no operation's field (a header the runtime reads), its problems reported at `path`. */
export function parseValue<S extends z.ZodType>(schema: S, value: unknown, path: string): z.output<S> {
  const parsed = schema.safeParse(value);
  if (parsed.success) return parsed.data;
  throw validationError(parsed.error.issues, [path]);
}
