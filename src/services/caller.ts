import type { Role } from "../wire/roles.js";
import type { Viewpoint } from "../store/visibility.js";

/** The authenticated agent an operation runs for. */
export interface Caller {
  agentId: string;
  role: Role;
}

export const seesAllProjects = (role: Role): boolean => role === "owner" || role === "archivist";

export const viewpointOf = (caller: Caller): Viewpoint => ({ agentId: caller.agentId, allProjects: seesAllProjects(caller.role) });
