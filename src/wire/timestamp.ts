import { z } from "zod";

/** Every time a record carries: RFC 3339 in UTC with milliseconds, as the server writes it. */
export const timestamp = z.string().meta({ format: "date-time", description: "RFC 3339 UTC with milliseconds" });

const RFC3339 =
  /^\d{4}-\d{2}-\d{2}[Tt ]\d{2}:\d{2}:\d{2}(\.\d+)?([Zz]|[+-]\d{2}:\d{2})$/;

/** Normalises any RFC 3339 time to the canonical form; undefined when it is not one. */
export function normalizeTimestamp(input: string): string | undefined {
  if (!RFC3339.test(input)) return undefined;
  const date = new Date(input.replace(" ", "T"));
  return Number.isNaN(date.getTime()) ? undefined : date.toISOString();
}

/** Any RFC 3339 time on input, normalised to UTC with milliseconds. */
export const timestampInput = z
  .string()
  .max(64)
  .transform((value, context) => {
    const normalised = normalizeTimestamp(value);
    if (normalised === undefined) {
      context.addIssue({ code: "custom", message: "expected an RFC 3339 timestamp" });
      return z.NEVER;
    }
    return normalised;
  })
  .meta({ format: "date-time" });
