import { z } from "zod";
import { defineOperation } from "./operation.js";

export const health = defineOperation({
  name: "health",
  title: "Health check",
  description: "Liveness and readiness: the version, the embedding model's state and the database's.",
  kind: "read",
  access: "public",
  http: { method: "GET", path: "/health" },
  input: z.strictObject({}),
  output: z
    .object({
      status: z.enum(["ok", "degraded"]),
      version: z.string(),
      embeddings: z.enum(["loading", "ready", "unavailable"]),
      database: z.enum(["ok", "error"]),
    })
    .meta({ id: "Health" }),
  handle({ services }) {
    return services.health();
  },
});

export const healthOperations = [health];
