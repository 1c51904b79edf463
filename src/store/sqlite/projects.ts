import type { Role } from "../core/config.js";
import type { Db } from "./db.js";

export interface ProjectRow {
  id: string;
  name: string;
  description: string;
  owner: string;
  created_at: string;
  member_count: number;
}

const SELECT_PROJECT = `SELECT p.*, (SELECT count(*) FROM project_members m WHERE m.project_id = p.id) AS member_count FROM projects p`;

export const projectById = (db: Db, id: string): ProjectRow | undefined =>
  db.get<ProjectRow>(`${SELECT_PROJECT} WHERE p.id = ?`, id);

export function insertProject(db: Db, row: Omit<ProjectRow, "member_count">): void {
  db.run(
    "INSERT INTO projects (id, name, description, owner, created_at) VALUES (?, ?, ?, ?, ?)",
    row.id,
    row.name,
    row.description,
    row.owner,
    row.created_at,
  );
}

/** Every project in id order after `afterId`, or only those `memberId` belongs to. */
export function listProjects(db: Db, afterId: string | null, limit: number, memberId?: string): ProjectRow[] {
  if (memberId === undefined) return db.all<ProjectRow>(`${SELECT_PROJECT} WHERE p.id > ? ORDER BY p.id LIMIT ?`, afterId ?? "", limit);
  return db.all<ProjectRow>(
    `${SELECT_PROJECT} WHERE p.id > ? AND p.id IN (SELECT project_id FROM project_members WHERE agent_id = ?) ORDER BY p.id LIMIT ?`,
    afterId ?? "",
    memberId,
    limit,
  );
}

/** Adds the membership; false when it already existed. */
export const addMember = (db: Db, projectId: string, agentId: string, at: string): boolean =>
  db.run("INSERT INTO project_members (project_id, agent_id, joined_at) VALUES (?, ?, ?) ON CONFLICT DO NOTHING", projectId, agentId, at)
    .changes > 0;

export const removeMember = (db: Db, projectId: string, agentId: string): boolean =>
  db.run("DELETE FROM project_members WHERE project_id = ? AND agent_id = ?", projectId, agentId).changes > 0;

export const setCurrentProject = (db: Db, agentId: string, projectId: string | null): void => {
  db.run("UPDATE agents SET current_project = ? WHERE agent_id = ?", projectId, agentId);
};

export const clearCurrentProject = (db: Db, agentId: string, projectId: string): void => {
  db.run("UPDATE agents SET current_project = NULL WHERE agent_id = ? AND current_project = ?", agentId, projectId);
};

export interface MemberRow {
  agent_id: string;
  role: Role;
  joined_at: string;
}

/** The project's members (live agents that joined it), by id. */
export const projectMembers = (db: Db, projectId: string): MemberRow[] =>
  db.all<MemberRow>(
    `SELECT a.agent_id, a.role, m.joined_at FROM project_members m
     JOIN agents a ON a.agent_id = m.agent_id
     WHERE m.project_id = ? AND a.deleted_at IS NULL
     ORDER BY a.agent_id`,
    projectId,
  );

export const memberIds = (db: Db, projectId: string): string[] =>
  db.all<{ agent_id: string }>("SELECT agent_id FROM project_members WHERE project_id = ? ORDER BY agent_id", projectId).map(
    (row) => row.agent_id,
  );
