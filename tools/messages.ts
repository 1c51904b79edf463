import { z } from "zod";
import { defineOperation } from "./operation.js";
import { markedRead, message, unreadCount } from "../src/wire/messages.js";
import { cursorParam } from "./schemas.js";
import { idRef, limitParam } from "../src/wire/fields.js";

const messageParam = { id: idRef.describe("message id or unique prefix") };

const messageSend = defineOperation({
  name: "message_send",
  title: "Send a message",
  description:
    "Send to an agent (its id), to everyone (`broadcast`) or to a project's members (`project:<id>`). `reply_to` threads it.",
  kind: "create",
  http: { method: "POST", path: "/messages" },
  input: z.strictObject({
    to: z
      .string()
      .regex(/^(broadcast|project:[a-z0-9][a-z0-9_-]{0,63}|[a-z0-9][a-z0-9_-]{0,63})$/, "an agent id, broadcast, or project:<id>"),
    subject: z.string().max(300).optional(),
    body: z.string().min(1).describe("at most MAX_CONTENT_BYTES bytes"),
    reply_to: idRef.optional(),
  }),
  output: message,
  errors: ["NOT_FOUND", "FORBIDDEN", "PAYLOAD_TOO_LARGE"],
  handle({ services, caller }, input) {
    return services.messages.send(caller, input);
  },
});

const messageInbox = defineOperation({
  name: "message_inbox",
  title: "Your unread messages",
  description:
    "Your unread messages (direct, broadcast, your projects'), oldest first; not marked read.",
  kind: "list",
  http: { method: "GET", path: "/messages/inbox" },
  input: z.strictObject({ limit: limitParam(500, 50), cursor: cursorParam }),
  output: message,
  handle({ services, caller }, input) {
    return services.messages.inbox(caller, input.cursor, input.limit);
  },
});

const messageUnreadCount = defineOperation({
  name: "message_unread_count",
  title: "How many unread messages",
  description: "The number of unread messages to you, without reading them.",
  kind: "read",
  http: { method: "GET", path: "/messages/inbox/count" },
  input: z.strictObject({}),
  output: unreadCount,
  handle({ services, caller }) {
    return services.messages.unread(caller);
  },
});

const messageConsume = defineOperation({
  name: "message_consume",
  title: "Take your unread messages",
  description:
    "Your unread messages, marked read in the same step. A retry with the same idempotency key returns the same batch.",
  kind: "action",
  http: { method: "POST", path: "/messages/inbox/consume" },
  input: z.strictObject({ limit: limitParam(500, 50).optional() }),
  output: z.array(message),
  handle({ services, caller }, input) {
    return services.messages.consume(caller, input.limit ?? 50);
  },
});

const messageReadAll = defineOperation({
  name: "message_read_all",
  title: "Mark all read",
  description: "Mark every unread message to you read.",
  kind: "action",
  http: { method: "POST", path: "/messages/inbox/read-all" },
  input: z.strictObject({}),
  output: markedRead,
  handle({ services, caller }) {
    return services.messages.readAll(caller);
  },
});

const messageList = defineOperation({
  name: "message_list",
  title: "List messages",
  description: "Messages you sent or received, newest first; `agent` is the other party, `read` your read state.",
  kind: "list",
  http: { method: "GET", path: "/messages" },
  input: z.strictObject({
    read: z.boolean().optional(),
    agent: z.string().min(1).max(64).optional(),
    limit: limitParam(500, 50),
    cursor: cursorParam,
  }),
  output: message,
  handle({ services, caller }, input) {
    return services.messages.list(caller, input);
  },
});

const messageGet = defineOperation({
  name: "message_get",
  title: "Read a message",
  description: "One message you sent or received.",
  kind: "read",
  http: { method: "GET", path: "/messages/:id" },
  input: z.strictObject(messageParam),
  output: message,
  errors: ["NOT_FOUND"],
  handle({ services, caller }, input) {
    return services.messages.get(caller, input.id);
  },
});

const messageMarkRead = defineOperation({
  name: "message_mark_read",
  title: "Mark a message read",
  description: "Mark one message you received read.",
  kind: "action",
  http: { method: "POST", path: "/messages/:id/read" },
  input: z.strictObject(messageParam),
  output: message,
  errors: ["NOT_FOUND"],
  handle({ services, caller }, input) {
    return services.messages.markRead(caller, input.id);
  },
});

export const messageOperations = [messageSend, messageInbox, messageUnreadCount, messageConsume, messageReadAll, messageList, messageGet, messageMarkRead];
