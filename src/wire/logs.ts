import { z } from "zod";
import { timestamp } from "./timestamp.js";

// The archivist's operational log (and the owner's notes in it).

export const logLevel = z.enum(["debug", "info", "warn", "error"]);
export type LogLevel = z.output<typeof logLevel>;

export const logEntry = z
  .object({
    id: z.uuid(),
    level: logLevel,
    source: z.string(),
    action: z.string(),
    message: z.string(),
    details: z.record(z.string(), z.unknown()),
    agent_id: z.string(),
    created_at: timestamp,
  })
  .meta({ id: "LogEntry" });
export type LogEntry = z.output<typeof logEntry>;
