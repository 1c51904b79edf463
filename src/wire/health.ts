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
    vector_index: z
      .enum(["off", "building", "ready"])
      .optional()
      .describe("SQLite's HNSW index of a large store: off (a small store, or none yet), building or loading, ready. Searches scan until it is ready."),
    vector_mirror: z
      .enum(["off", "building", "ready"])
      .optional()
      .describe(
        "SQLite's in-memory copy of the stored vectors, which answers searches and duplicate checks below the HNSW's threshold: off (past 200,000 entries, or none yet), building (also while it is split into lists, past 20,000 entries), ready. Until it is built they scan the database.",
      ),
  })
  .meta({ id: "Health" });
export type Health = z.output<typeof health>;
