import { z } from "zod";
import { defineOperation } from "./operation.js";
import { cursorParam, eventRecord, limitParam } from "./schemas.js";

export const eventList = defineOperation({
  name: "event_list",
  title: "Events since a point",
  description:
    "Events you may see after `since` (an RFC 3339 time, or `seq:<n>` to continue right after event n), oldest " +
    "first. `type` is exact (`memory.written`) or a family (`memory.*`); `agent` is the emitter.",
  kind: "list",
  access: "agent",
  http: { method: "GET", path: "/events" },
  input: z.strictObject({
    since: z.string().min(1).max(64).describe("RFC 3339 timestamp, or seq:<n>"),
    type: z
      .string()
      .regex(/^[a-z][a-z0-9_]*(\.[a-z0-9_]+)*(\.\*)?$/, "an event type such as memory.written, or a family such as memory.*")
      .max(100)
      .optional(),
    agent: z.string().min(1).max(64).optional(),
    limit: limitParam(500, 50),
    cursor: cursorParam,
  }),
  output: eventRecord,
  handle({ services, caller }, input) {
    return services.events.list(caller, input);
  },
});

export const eventOperations = [eventList];
