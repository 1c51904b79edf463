import { z } from "zod";
import { role } from "./roles.js";
import { timestamp } from "./timestamp.js";

// Projects, their members, and what clearing one removed.

export const project = z
  .object({
    id: z.string().describe("the lower-cased slug of the name; what every project field holds"),
    name: z.string(),
    description: z.string(),
    owner: z.string().describe("the agent that created it"),
    created_at: timestamp,
    member_count: z.number().int(),
  })
  .meta({ id: "Project" });
export type Project = z.output<typeof project>;

export const projectMember = z.object({
  agent_id: z.string(),
  role,
  project_owner: z.boolean(),
  joined_at: timestamp,
});
export type ProjectMember = z.output<typeof projectMember>;

export const projectClearCounts = z.object({ memory: z.number().int(), tasks: z.number().int(), messages: z.number().int(), decisions: z.number().int() });
export type ProjectClearCounts = z.output<typeof projectClearCounts>;
