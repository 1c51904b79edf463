import { z } from "zod";

/** What an agent may do: the configuration (AGENT_KEYS), the store and the API all take these. */
export const roles = ["owner", "agent", "archivist", "viewer"] as const;
export const role = z.enum(roles);
export type Role = z.output<typeof role>;
