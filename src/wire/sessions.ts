import { z } from "zod";
import { memoryChange, memoryEntry } from "./memory.js";
import { message } from "./messages.js";
import { task } from "./tasks.js";
import { timestamp } from "./timestamp.js";

// Where a session stopped (its handoff), and everything the next one starts with.

export const handoff = z
  .object({
    id: z.uuid(),
    agent_id: z.string(),
    host: z.string().nullable(),
    summary: z.string(),
    in_progress: z.array(z.string()),
    next_steps: z.array(z.string()),
    memory_refs: z.array(z.string()),
    created_at: timestamp,
  })
  .meta({ id: "Handoff" });
export type Handoff = z.output<typeof handoff>;

export const contextPack = z
  .object({
    last_handoff: handoff.nullable(),
    memory_delta_since_last_seen: z
      .array(memoryChange)
      .describe("visible entries changed since the memory cursor: the oldest 200 changes at most, newest last; deleted ones as tombstones"),
    delta_truncated: z.boolean().describe("more changes follow: the next call returns them"),
    seen_until: timestamp.describe("when the last change this delta holds was made (the cursor moves past it unless peek)"),
    unread_messages: z.array(message),
    claimed_tasks: z.array(task),
    directives: z.array(memoryEntry),
    left_out: z
      .object({
        last_handoff: z.number().int(),
        directives: z.number().int(),
        claimed_tasks: z.number().int(),
        unread_messages: z.number().int(),
        memory_delta: z.number().int(),
      })
      .optional()
      .describe("with max_tokens: what did not fit, by part (the delta's rest comes on the next call)"),
  })
  .meta({ id: "ContextPack" });
export type ContextPack = z.output<typeof contextPack>;
