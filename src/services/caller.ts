import type { Role } from "../wire/roles.js";
import type { MeshCapability } from "../wire/mesh.js";
import type { Viewpoint } from "../store/visibility.js";

/** What a peer's mesh token grants (CONTRACT §16): reads of the shared entries of these projects. */
export interface MeshGrant {
  tokenId: string;
  projects: readonly string[];
  includeGlobal: boolean;
  capabilities: readonly MeshCapability[];
}

/** The authenticated agent an operation runs for, or a peer presenting a mesh token (`mesh`). */
export interface Caller {
  agentId: string;
  role: Role;
  /** Set for a peer: it acts as no agent, and only the routes that accept mesh tokens let it in. */
  mesh?: MeshGrant;
  /**
   * Set for a bearer token whose scope is `cairn:read` alone: it acts with a viewer's rights (its
   * `role` says viewer), and a change it attempts is refused as `insufficient_scope`.
   */
  readOnlyScope?: true;
}

export const seesAllProjects = (role: Role): boolean => role === "owner" || role === "archivist";

export const viewpointOf = (caller: Caller): Viewpoint => ({ agentId: caller.agentId, allProjects: seesAllProjects(caller.role) });

/** Whether a peer's grant reaches `project` (null: the global entries). */
export const grantReaches = (grant: MeshGrant, project: string | null): boolean =>
  project === null ? grant.includeGlobal : grant.projects.includes(project);
