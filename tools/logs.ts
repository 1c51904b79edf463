import { z } from "zod";
import { defineOperation } from "./operation.js";
import { logEntry, logLevel as level } from "../src/wire/logs.js";
import { cursorParam } from "./schemas.js";
import { limitParam } from "../src/wire/fields.js";
import { timestampInput } from "../src/wire/timestamp.js";

const word = z.string().trim().min(1).max(100);

const logWrite = defineOperation({
  name: "log_write",
  title: "Write a log entry",
  description:
    "Archivist and owner only: record what a pass did (`source` such as archivist, `action` such as synthesis, a " +
    "message and JSON details of at most 16 KiB). Kept for EVENT_RETENTION_DAYS.",
  kind: "create",
  roles: ["archivist", "owner"],
  http: { method: "POST", path: "/logs" },
  input: z.strictObject({
    level: level.default("info"),
    source: word,
    action: word,
    message: z.string().max(4000).default(""),
    details: z.record(z.string(), z.unknown()).default({}),
  }),
  output: logEntry,
  errors: ["PAYLOAD_TOO_LARGE"],
  handle({ services, caller }, input) {
    return services.logs.write(caller, input);
  },
});

const logList = defineOperation({
  name: "log_list",
  title: "List log entries",
  description: "Owner only: the archivist's log, newest first, filtered by level, source, action and time.",
  kind: "list",
  roles: ["owner"],
  http: { method: "GET", path: "/logs" },
  input: z.strictObject({
    level: level.optional(),
    source: word.optional(),
    action: word.optional(),
    since: timestampInput.optional().describe("only entries after this time"),
    limit: limitParam(500, 50),
    cursor: cursorParam,
  }),
  output: logEntry,
  handle({ services }, input) {
    return services.logs.list(input);
  },
});

export const logOperations = [logWrite, logList];
