import { z } from "zod";
import { timestamp } from "./timestamp.js";

// Decisions: append-only records of what was decided and why (CONTRACT §12).

const decisionAlternative = z
  .object({
    option: z.string(),
    reason_rejected: z.string().nullable().describe("why it was not chosen; null when not said"),
  })
  .meta({ id: "DecisionAlternative" });
export type DecisionAlternative = z.output<typeof decisionAlternative>;

export const decision = z
  .object({
    id: z.uuid(),
    project: z.string().nullable(),
    agent_id: z.string().describe("who recorded it"),
    task_id: z.uuid().nullable().describe("the task it settles; its log holds a comment naming this decision"),
    decision: z.string(),
    rationale: z.string(),
    alternatives: z.array(decisionAlternative).describe("the options considered and rejected"),
    memory_refs: z.array(z.uuid()).describe("the memory entries it rests on"),
    tags: z.array(z.string()),
    supersedes: z.uuid().nullable().describe("the earlier decision this one replaces"),
    superseded_by: z.uuid().nullable().describe("the later decision that replaced this one; the only field that ever changes"),
    created_at: timestamp,
  })
  .meta({ id: "Decision" });
export type Decision = z.output<typeof decision>;
