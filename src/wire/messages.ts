import { z } from "zod";
import { timestamp } from "./timestamp.js";

// Messages, with the reader's own read state, and the counts the inbox answers with.

export const message = z
  .object({
    id: z.uuid(),
    from: z.string(),
    to: z.string().describe("an agent id, broadcast, or project:<id>"),
    project: z.string().nullable(),
    subject: z.string(),
    body: z.string(),
    read: z.boolean().describe("your own read state"),
    reply_to: z.uuid().nullable(),
    created_at: timestamp,
  })
  .meta({ id: "Message" });
export type Message = z.output<typeof message>;

export const unreadCount = z.object({ unread: z.number().int() });
export type UnreadCount = z.output<typeof unreadCount>;

export const markedRead = z.object({ marked: z.number().int() });
export type MarkedRead = z.output<typeof markedRead>;
