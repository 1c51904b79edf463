import { z } from "zod";

/** Liveness and readiness: what `GET /health` answers. */
export const health = z
  .object({
    status: z.enum(["ok", "degraded"]),
    version: z.string(),
    embeddings: z.enum(["loading", "ready", "unavailable"]),
    database: z.enum(["ok", "error"]),
  })
  .meta({ id: "Health" });
export type Health = z.output<typeof health>;
