import { z } from "zod";
import { health as healthRecord } from "../src/wire/health.js";
import { defineOperation } from "./operation.js";

const health = defineOperation({
  name: "health",
  title: "Health check",
  description: "Liveness and readiness: the version, the embedding model's state and the database's.",
  kind: "read",
  access: "public",
  http: { method: "GET", path: "/health" },
  input: z.strictObject({}),
  output: healthRecord,
  handle({ services }) {
    return services.health();
  },
});

export const healthOperations = [health];
