import type { MemberRow, ProjectRow, ProjectStore } from "../projects.js";
import type { Reader, Tx } from "../store.js";
import { connectionOf } from "./transactions.js";

const SELECT_PROJECT = `SELECT p.*, (SELECT count(*) FROM project_members m WHERE m.project_id = p.id) AS member_count FROM projects p`;

export class PgProjects implements ProjectStore {
  async byId(r: Reader, id: string): Promise<ProjectRow | undefined> {
    const db = connectionOf(r);
    return db.get<ProjectRow>(`${SELECT_PROJECT} WHERE p.id = ?`, id);
  }

  async insert(tx: Tx, row: Omit<ProjectRow, "member_count">): Promise<void> {
    const db = connectionOf(tx);
    await db.run(
      "INSERT INTO projects (id, name, description, owner, created_at) VALUES (?, ?, ?, ?, ?)",
      row.id,
      row.name,
      row.description,
      row.owner,
      row.created_at,
    );
  }

  async list(r: Reader, afterId: string | null, limit: number, memberId?: string): Promise<ProjectRow[]> {
    const db = connectionOf(r);
    if (memberId === undefined) return db.all<ProjectRow>(`${SELECT_PROJECT} WHERE p.id > ? ORDER BY p.id LIMIT ?`, afterId ?? "", limit);
    return db.all<ProjectRow>(
      `${SELECT_PROJECT} WHERE p.id > ? AND p.id IN (SELECT project_id FROM project_members WHERE agent_id = ?) ORDER BY p.id LIMIT ?`,
      afterId ?? "",
      memberId,
      limit,
    );
  }

  async addMember(tx: Tx, projectId: string, agentId: string, at: string): Promise<boolean> {
    const db = connectionOf(tx);
    const result = await db.run(
      "INSERT INTO project_members (project_id, agent_id, joined_at) VALUES (?, ?, ?) ON CONFLICT DO NOTHING",
      projectId,
      agentId,
      at,
    );
    return result.changes > 0;
  }

  async removeMember(tx: Tx, projectId: string, agentId: string): Promise<boolean> {
    const db = connectionOf(tx);
    return (await db.run("DELETE FROM project_members WHERE project_id = ? AND agent_id = ?", projectId, agentId)).changes > 0;
  }

  async members(r: Reader, projectId: string): Promise<MemberRow[]> {
    const db = connectionOf(r);
    return db.all<MemberRow>(
      `SELECT a.agent_id, a.role, m.joined_at FROM project_members m
     JOIN agents a ON a.agent_id = m.agent_id
     WHERE m.project_id = ? AND a.deleted_at IS NULL
     ORDER BY a.agent_id`,
      projectId,
    );
  }

  async memberIds(r: Reader, projectId: string): Promise<string[]> {
    const db = connectionOf(r);
    const rows = await db.all<{ agent_id: string }>("SELECT agent_id FROM project_members WHERE project_id = ? ORDER BY agent_id", projectId);
    return rows.map((row) => row.agent_id);
  }

  async isMember(r: Reader, projectId: string, agentId: string): Promise<boolean> {
    const db = connectionOf(r);
    return (await db.get("SELECT 1 FROM project_members WHERE project_id = ? AND agent_id = ?", projectId, agentId)) !== undefined;
  }

  // In SQLite's order: its (agent_id, project_id) index.
  async projectsOf(r: Reader, agentId: string): Promise<string[]> {
    const db = connectionOf(r);
    const rows = await db.all<{ project_id: string }>("SELECT project_id FROM project_members WHERE agent_id = ? ORDER BY project_id", agentId);
    return rows.map((row) => row.project_id);
  }
}
