import { z } from "zod";
import { role } from "./roles.js";
import { timestamp } from "./timestamp.js";

// Agents as others see them, as they see themselves, and as they are created; their task outcomes.

export const agentRecord = z
  .object({
    agent_id: z.string(),
    display_name: z.string().nullable(),
    role,
    created_at: timestamp,
    last_seen_at: timestamp.nullable(),
    online: z.boolean(),
    current_project: z.string().nullable().describe("the project it works in; null when global, or a project you are not in"),
    claimed_tasks: z.array(z.string()).describe("ids of the tasks it has claimed that you can see"),
  })
  .meta({ id: "Agent" });
export type AgentRecord = z.output<typeof agentRecord>;

export const agentSelf = agentRecord
  .extend({
    projects: z.array(z.string()),
    can_write_directives: z.boolean().describe("whether you are in DIRECTIVE_WRITERS"),
  })
  .meta({ id: "AgentSelf" });
export type AgentSelf = z.output<typeof agentSelf>;

/** A new agent: the only answer that ever carries its key. */
export const registration = z
  .object({ agent_id: z.string(), api_key: z.string().describe("shown once; store it now"), role, created_at: timestamp })
  .meta({ id: "Registration" });
export type Registration = z.output<typeof registration>;

export const keyRotation = z.object({ api_key: z.string() });
export type KeyRotation = z.output<typeof keyRotation>;

const outcomeStats = {
  completed: z.number().int(),
  failed: z.number().int(),
  // completed / (completed + failed); null (as is median_seconds) before any outcome.
  success_rate: z.number().nullable(),
  median_seconds: z.number().nullable().describe("median seconds from claim to outcome"),
};

const tagPerformance = z.object({ tag: z.string(), ...outcomeStats });
export type TagPerformance = z.output<typeof tagPerformance>;

/** One agent's task outcomes, overall and per tag. */
export const agentPerformance = z.object({ agent_id: z.string(), ...outcomeStats, by_tag: z.array(tagPerformance) });
export type AgentPerformance = z.output<typeof agentPerformance>;
