import { z } from "zod";
import { compactHit, memoryChange, memoryEntry, tombstone } from "./memory.js";
import { message } from "./messages.js";
import { compactTask, task } from "./tasks.js";
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

/**
 * The pack in compact form (MCP's default, `compact=true` over REST): each changed entry as a
 * search hit without a score and each claimed task as a task list's line, so a new agent's first
 * pack of up to 200 changes is a list to choose from rather than the entries themselves. The last
 * handoff, the directives and the messages are whole: a session acts on every word of them.
 */
export const compactContextPack = contextPack
  .extend({
    memory_delta_since_last_seen: z
      .array(z.union([compactHit, tombstone]))
      .describe("visible entries changed since the memory cursor, as {id, type, age, headline, snippet?}: the oldest 200 changes at most, newest last; deleted ones as tombstones"),
    claimed_tasks: z.array(compactTask),
  })
  .meta({ id: "CompactContextPack" });
export type CompactContextPack = z.output<typeof compactContextPack>;
