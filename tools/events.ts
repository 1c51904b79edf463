import { z } from "zod";
import { normalizeTimestamp } from "../src/wire/timestamp.js";
import type { EventPoint } from "../src/services/events.js";
import { defineOperation, reply } from "./operation.js";
import { eventRecord } from "../src/wire/events.js";
import { cursorParam } from "./schemas.js";
import { limitParam, projectId } from "../src/wire/fields.js";

const typePattern = z
  .string()
  .regex(/^[a-z][a-z0-9_]*(\.[a-z0-9_]+)*(\.\*)?$/, "an event type such as memory.written, or a family such as memory.*")
  .max(100);
const seqText = z.string().regex(/^\d{1,15}$/, "an event seq (a non-negative integer)");

/** `since` of a listing: `seq:<n>` continues exactly after a known event; otherwise it is a time. */
export const eventPoint = z
  .string()
  .min(1)
  .max(64)
  .transform((since, context): EventPoint => {
    const seq = /^seq:(\d{1,15})$/.exec(since)?.[1];
    if (seq !== undefined) return { seq: Number(seq) };
    const at = normalizeTimestamp(since);
    if (at !== undefined) return { at };
    context.addIssue({ code: "custom", message: "expected an RFC 3339 timestamp or seq:<n>" });
    return z.NEVER;
  });

export const eventList = defineOperation({
  name: "event_list",
  title: "Events since a point",
  description:
    "Events you may see after `since` (an RFC 3339 time, or `seq:<n>` to continue right after event n), oldest " +
    "first (`order=desc`: newest first). `type` is exact (`memory.written`) or a family (`memory.*`); `agent` " +
    "is the emitter.",
  kind: "list",
  http: { method: "GET", path: "/events" },
  input: z.strictObject({
    since: eventPoint.describe("RFC 3339 timestamp, or seq:<n>"),
    order: z.enum(["asc", "desc"]).default("asc").describe("desc: newest first"),
    type: typePattern.optional(),
    agent: z.string().min(1).max(64).optional(),
    limit: limitParam(500, 50),
    cursor: cursorParam,
  }),
  output: eventRecord,
  handle({ services, caller }, input) {
    return services.events.list(caller, input);
  },
});

const eventStream = defineOperation({
  name: "event_stream",
  title: "Live events",
  description:
    "Server-sent events: every event you may see, as it happens. Each arrives as `id: <seq>`, `event: <type>`, " +
    "`data: <event JSON>`; the stream opens with `retry: 3000` and sends a `: ping` comment every 15 s. To resume " +
    "after a dropped connection send `Last-Event-ID` (or `?last_event_id=`): the events after it are replayed from " +
    "the log, then the stream goes live, with no gap and no duplicate. If that point is older than retention the " +
    "stream starts with `event: reset` (refetch what you hold) and replays what is left. A client that falls too " +
    "far behind is disconnected and should reconnect with its last id. Filters: `type` (exact, or a family such " +
    "as `task.*`) and `agent` (the emitter). While a stream is open the agent counts as online.",
  kind: "stream",
  http: { method: "GET", path: "/events/stream", headers: { last_event_header: "Last-Event-ID" } },
  input: z.strictObject({
    type: typePattern.optional(),
    agent: z.string().min(1).max(64).optional(),
    last_event_id: seqText.optional().describe("resume after this event (the Last-Event-ID header takes precedence)"),
    last_event_header: seqText.optional().describe("the SSE Last-Event-ID header"),
  }),
  output: eventRecord,
  handle({ services, caller }, input) {
    const resume = input.last_event_header ?? input.last_event_id;
    return services.events.subscribe(caller, { type: input.type, agent: input.agent, lastEventId: resume === undefined ? undefined : Number(resume) });
  },
});

const eventWait = defineOperation({
  name: "event_wait",
  title: "Wait for an event",
  description:
    "Wait for an event of one of `types` after this call (or after `after_seq`) and return it; nothing after `timeout` seconds (1-60, default 30). Use it instead of polling.",
  kind: "read",
  http: { method: "GET", path: "/events/wait", otherStatuses: [{ status: 204, description: "nothing happened before the timeout" }] },
  input: z.strictObject({
    types: z.array(typePattern).max(20).optional().describe("exact types or families such as `task.*`, as a list or comma-separated; none: any"),
    timeout: z.number().int().min(1).max(60).optional().describe("seconds, default 30"),
    after_seq: z.number().int().min(0).optional().describe("wait for an event after this seq instead of after now"),
  }),
  output: eventRecord,
  async handle({ services, caller }, input) {
    const event = await services.events.wait(caller, { types: input.types ?? [], timeoutSeconds: input.timeout ?? 30, afterSeq: input.after_seq });
    return event ?? reply(undefined as never, { status: 204 });
  },
});

const eventEmit = defineOperation({
  name: "event_emit",
  title: "Emit a custom event",
  description:
    "Records a custom event and delivers it to every subscriber who may see it: everyone, or with `project` the " +
    "project's members. The server's own families (`memory.*`, `task.*`, `message.*`, `project.*`, `agent.*`, " +
    "`session.*`, `graph.*`, `archivist.*`) are refused, except `archivist.*` from the archivist. The payload is a " +
    "JSON object of at most 16 KiB; secrets in its strings are stored as `[REDACTED:<kind>]`.",
  kind: "create",
  http: { method: "POST", path: "/events" },
  input: z.strictObject({
    type: z
      .string()
      .regex(/^[a-z][a-z0-9_]*(\.[a-z0-9_]+)+$/, "a dotted event type such as deploy.finished")
      .max(100),
    payload: z.record(z.string(), z.unknown()).optional().describe("default {}"),
    project: projectId.nullable().optional().describe("limit the event to a project's members; default global"),
  }),
  output: eventRecord,
  errors: ["PAYLOAD_TOO_LARGE"],
  handle({ services, caller }, input) {
    return services.events.emit(caller, { type: input.type, payload: input.payload ?? {}, project: input.project });
  },
});

export const eventOperations = [eventEmit, eventList, eventWait, eventStream];
