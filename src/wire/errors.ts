import { z } from "zod";

/** The body of every refusal: `{detail, code}`, and for 422 one entry per problem. */
export const errorBody = z
  .object({
    detail: z.string(),
    code: z.string(),
    errors: z.array(z.object({ path: z.string(), message: z.string() })).optional(),
  })
  .meta({ id: "Error" });
export type ErrorBody = z.output<typeof errorBody>;
