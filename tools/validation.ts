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
export function validationError(issues: readonly z.core.$ZodIssue[], at: readonly string[] = [], schema?: z.ZodType): AppError {
  const ordinary = issues.filter((issue) => refusalOf(issue) === undefined);
  const [first] = issues;
  const refusal = first && refusalOf(first);
  if (ordinary.length === 0 && first && refusal) return new AppError(refusal, first.message);
  // A top-level field the input does not take is most often a guess at one it does (an agent's
  // `query` for `q`, `timeout_seconds` for `timeout`): the refusal names what it takes.
  const known = schema instanceof z.ZodObject ? Object.keys(schema.shape) : [];
  let helped = 0;
  return invalidFields(
    ordinary.flatMap((issue) => {
      const path = [...at, ...issue.path.map(String)];
      // One error per unknown field, each at its own path.
      if (issue.code === "unrecognized_keys") {
        const fields = issue.path.length === 0 ? known : [];
        // Bounded: a body of thousands of stray keys, or a very long one, costs no more than a few.
        const help = (key: string): readonly string[] => (key.length <= MAX_GUESS_CHARS && helped++ < NAMED_GUESSES ? fields : []);
        return issue.keys.map((key) => ({ path: [...path, key].join("."), message: unknownField(key, help(key)) }));
      }
      return [{ path: path.join("."), message: issue.message }];
    }),
  );
}

/** At most this many of an input's fields are named in a refusal. */
const NAMED_FIELDS = 24;
/** Unknown fields answered with the fields there are, per request, and the longest name compared. */
const NAMED_GUESSES = 8;
const MAX_GUESS_CHARS = 64;

/** "unknown field", with the field meant when one is near the name given, else the fields there are. */
function unknownField(key: string, fields: readonly string[]): string {
  if (fields.length === 0) return "unknown field";
  const lower = key.toLowerCase();
  // Nearness needs a name long enough to mean something: two letters to extend, five to misspell twice.
  const typos = lower.length >= 5 ? 2 : lower.length >= 3 ? 1 : 0;
  const near = fields.find((field) => (lower.length >= 2 && (lower.startsWith(field) || field.startsWith(lower))) || editDistance(lower, field) <= typos);
  if (near !== undefined) return `unknown field; did you mean ${near}?`;
  const named = fields.slice(0, NAMED_FIELDS).join(", ");
  return `unknown field; the fields are ${named}${fields.length > NAMED_FIELDS ? ", …" : ""}`;
}

/** Levenshtein distance; names are at most a few dozen characters. */
function editDistance(a: string, b: string): number {
  let previous = Array.from({ length: b.length + 1 }, (_, index) => index);
  for (let i = 1; i <= a.length; i++) {
    const current = [i];
    for (let j = 1; j <= b.length; j++) {
      current[j] = Math.min((previous[j] as number) + 1, (current[j - 1] as number) + 1, (previous[j - 1] as number) + (a[i - 1] === b[j - 1] ? 0 : 1));
    }
    previous = current;
  }
  return previous[b.length] as number;
}

/** Parses a value that is no operation's field (a header the runtime reads), its problems reported at `path`. */
export function parseValue<S extends z.ZodType>(schema: S, value: unknown, path: string): z.output<S> {
  const parsed = schema.safeParse(value);
  if (parsed.success) return parsed.data;
  throw validationError(parsed.error.issues, [path]);
}
