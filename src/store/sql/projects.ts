import type { MemberRow, ProjectRow, ProjectStore } from "../projects.js";
import type { Reader, Tx } from "../store.js";
import type { SqlDb } from "./dialect.js";

const SELECT_PROJECT = `SELECT p.*, (SELECT count(*) FROM project_members m WHERE m.project_id = p.id) AS member_count FROM projects p`;

export class SqlProjects implements ProjectStore {
  constructor(private readonly db: SqlDb) {}

  byId(r: Reader, id: string): Promise<ProjectRow | undefined> {
    return this.db.get<ProjectRow>(r, `${SELECT_PROJECT} WHERE p.id = ?`, id);
  }

  async insert(tx: Tx, row: Omit<ProjectRow, "member_count">): Promise<void> {
    await this.db.run(
      tx,
      "INSERT INTO projects (id, name, description, owner, created_at) VALUES (?, ?, ?, ?, ?)",
      row.id, row.name, row.description, row.owner, row.created_at,
    );
  }

  list(r: Reader, afterId: string | null, limit: number, memberId?: string): Promise<ProjectRow[]> {
    if (memberId === undefined) return this.db.all<ProjectRow>(r, `${SELECT_PROJECT} WHERE p.id > ? ORDER BY p.id LIMIT ?`, afterId ?? "", limit);
    return this.db.all<ProjectRow>(
      r,
      `${SELECT_PROJECT} WHERE p.id > ? AND p.id IN (SELECT project_id FROM project_members WHERE agent_id = ?) ORDER BY p.id LIMIT ?`,
      afterId ?? "", memberId, limit,
    );
  }

  async addMember(tx: Tx, projectId: string, agentId: string, at: string): Promise<boolean> {
    return (await this.db.run(tx, "INSERT INTO project_members (project_id, agent_id, joined_at) VALUES (?, ?, ?) ON CONFLICT DO NOTHING", projectId, agentId, at)) > 0;
  }

  async removeMember(tx: Tx, projectId: string, agentId: string): Promise<boolean> {
    return (await this.db.run(tx, "DELETE FROM project_members WHERE project_id = ? AND agent_id = ?", projectId, agentId)) > 0;
  }

  members(r: Reader, projectId: string): Promise<MemberRow[]> {
    return this.db.all<MemberRow>(
      r,
      `SELECT a.agent_id, a.role, m.joined_at FROM project_members m
     JOIN agents a ON a.agent_id = m.agent_id
     WHERE m.project_id = ? AND a.deleted_at IS NULL
     ORDER BY a.agent_id`,
      projectId,
    );
  }

  async memberIds(r: Reader, projectIds: readonly string[]): Promise<string[]> {
    if (projectIds.length === 0) return [];
    const listed = this.db.dialect.inList("project_id", projectIds);
    const rows = await this.db.all<{ agent_id: string }>(r, `SELECT DISTINCT agent_id FROM project_members WHERE ${listed.sql} ORDER BY agent_id`, ...listed.params);
    return rows.map((row) => row.agent_id);
  }

  async isMember(r: Reader, projectId: string, agentId: string): Promise<boolean> {
    return (await this.db.get(r, "SELECT 1 FROM project_members WHERE project_id = ? AND agent_id = ?", projectId, agentId)) !== undefined;
  }

  // In the order of SQLite's (agent_id, project_id) index.
  async projectsOf(r: Reader, agentId: string): Promise<string[]> {
    const rows = await this.db.all<{ project_id: string }>(r, "SELECT project_id FROM project_members WHERE agent_id = ? ORDER BY project_id", agentId);
    return rows.map((row) => row.project_id);
  }
}
