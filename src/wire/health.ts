import { z } from "zod";

/** Liveness and readiness: what `GET /health` answers. */
export const health = z
  .object({
    status: z.enum(["ok", "degraded"]),
    version: z.string(),
    instance_id: z.uuid().describe("this installation's id, made on its first start"),
    instance_name: z.string().describe("INSTANCE_NAME: how it names itself to peers and feed readers"),
    embeddings: z.enum(["loading", "ready", "unavailable"]),
    database: z.enum(["ok", "error"]),
  })
  .meta({ id: "Health" });
export type Health = z.output<typeof health>;
