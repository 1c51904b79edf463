import type { Role } from "../wire/roles.js";
import { rowColumns } from "./row-columns.js";
import type { Reader, Tx } from "./store.js";

export interface ProjectRow {
  id: string;
  name: string;
  description: string;
  owner: string;
  created_at: string;
  member_count: number;
}

export const PROJECT_ROW_COLUMNS = rowColumns<ProjectRow, "member_count">("projects", { id: true, name: true, description: true, owner: true, created_at: true });

export interface MemberRow {
  agent_id: string;
  role: Role;
  joined_at: string;
}

/** `role` is the agent's, from `agents`. */
export const MEMBER_ROW_COLUMNS = rowColumns<MemberRow, "role">("project_members", { agent_id: true, joined_at: true }, ["project_id"]);

export interface ProjectStore {
  byId(r: Reader, id: string): Promise<ProjectRow | undefined>;
  insert(tx: Tx, row: Omit<ProjectRow, "member_count">): Promise<void>;
  /** Every project in id order after `afterId`, or only those `memberId` belongs to. */
  list(r: Reader, afterId: string | null, limit: number, memberId?: string): Promise<ProjectRow[]>;
  /** Adds the membership; false when it already existed. */
  addMember(tx: Tx, projectId: string, agentId: string, at: string): Promise<boolean>;
  removeMember(tx: Tx, projectId: string, agentId: string): Promise<boolean>;
  /** The project's members (live agents that joined it), by id. */
  members(r: Reader, projectId: string): Promise<MemberRow[]>;
  /** Ids of every agent that joined any of the projects, deleted ones included, each once. */
  memberIds(r: Reader, projectIds: readonly string[]): Promise<string[]>;
  isMember(r: Reader, projectId: string, agentId: string): Promise<boolean>;
  /** The projects the agent belongs to. */
  projectsOf(r: Reader, agentId: string): Promise<string[]>;
}
