import type { Role } from "../../wire/roles.js";
import type { AgentRow, AgentStore, NewAgentRow } from "../agents.js";
import type { Reader, Tx } from "../store.js";
import { connectionOf } from "./transactions.js";
import type { SqliteVectorIndex } from "./vectors.js";

export class SqliteAgents implements AgentStore {
  constructor(private readonly vectors: SqliteVectorIndex) {}

  async get(r: Reader, agentId: string): Promise<AgentRow | undefined> {
    const db = connectionOf(r);
    return db.get<AgentRow>("SELECT * FROM agents WHERE agent_id = ?", agentId);
  }

  // The stand-in is the next id in order, or the last. Either way the query seeks the id index
  // twice and reads one agent's whole row from wherever it lies, so it touches as cold a row
  // whether or not the agent exists.
  async forKeyCheck(r: Reader, agentId: string): Promise<(AgentRow & { found: 0 | 1 }) | undefined> {
    const db = connectionOf(r);
    return db.get<AgentRow & { found: 0 | 1 }>(
      `SELECT a.*, a.agent_id = ? AS found FROM agents a
     WHERE a.agent_id = COALESCE((SELECT agent_id FROM agents WHERE agent_id >= ? ORDER BY agent_id LIMIT 1), (SELECT max(agent_id) FROM agents))`,
      agentId,
      agentId,
    );
  }

  async insert(tx: Tx, row: NewAgentRow): Promise<void> {
    const db = connectionOf(tx);
    db.run(
      "INSERT INTO agents (agent_id, display_name, role, key_hash, key_source, created_at) VALUES (?, ?, ?, ?, ?, ?)",
      row.agent_id,
      row.display_name,
      row.role,
      row.key_hash,
      row.key_source,
      row.created_at,
    );
  }

  async list(r: Reader, afterId: string | null, limit: number): Promise<AgentRow[]> {
    const db = connectionOf(r);
    return db.all<AgentRow>(
      "SELECT * FROM agents WHERE deleted_at IS NULL AND agent_id > ? ORDER BY agent_id LIMIT ?",
      afterId ?? "",
      limit,
    );
  }

  async liveIds(r: Reader): Promise<string[]> {
    const db = connectionOf(r);
    return db.all<{ agent_id: string }>("SELECT agent_id FROM agents WHERE deleted_at IS NULL ORDER BY agent_id").map((row) => row.agent_id);
  }

  async setKey(tx: Tx, agentId: string, keyHash: Buffer | null, source?: AgentRow["key_source"]): Promise<void> {
    const db = connectionOf(tx);
    if (source) db.run("UPDATE agents SET key_hash = ?, key_source = ? WHERE agent_id = ?", keyHash, source, agentId);
    else db.run("UPDATE agents SET key_hash = ? WHERE agent_id = ?", keyHash, agentId);
  }

  async restoreKey(tx: Tx, agentId: string, keyHash: Buffer, source: AgentRow["key_source"], role: Role): Promise<void> {
    const db = connectionOf(tx);
    db.run("UPDATE agents SET key_hash = ?, key_source = ?, role = ?, deleted_at = NULL WHERE agent_id = ?", keyHash, source, role, agentId);
  }

  async staticWithKeys(r: Reader): Promise<AgentRow[]> {
    const db = connectionOf(r);
    return db.all<AgentRow>("SELECT * FROM agents WHERE key_source = 'static' AND key_hash IS NOT NULL");
  }

  async setRole(tx: Tx, agentId: string, role: Role): Promise<void> {
    const db = connectionOf(tx);
    db.run("UPDATE agents SET role = ? WHERE agent_id = ?", role, agentId);
  }

  async setDisplayName(tx: Tx, agentId: string, displayName: string | null): Promise<void> {
    const db = connectionOf(tx);
    db.run("UPDATE agents SET display_name = ? WHERE agent_id = ?", displayName, agentId);
  }

  async touch(tx: Tx, agentId: string, at: string): Promise<void> {
    const db = connectionOf(tx);
    db.run("UPDATE agents SET last_seen_at = ? WHERE agent_id = ?", at, agentId);
  }

  async markDeleted(tx: Tx, agentId: string, at: string): Promise<void> {
    const db = connectionOf(tx);
    db.run("UPDATE agents SET key_hash = NULL, deleted_at = ?, current_project = NULL WHERE agent_id = ?", at, agentId);
  }

  async rename(tx: Tx, from: string, to: string): Promise<void> {
    const db = connectionOf(tx);
    db.run("UPDATE agents SET agent_id = ? WHERE agent_id = ?", to, from);
    db.run("UPDATE memory SET agent_id = ? WHERE agent_id = ?", to, from);
    db.run("UPDATE memory_readers SET agent_id = ? WHERE agent_id = ?", to, from);
    db.run("UPDATE project_members SET agent_id = ? WHERE agent_id = ?", to, from);
    db.run("UPDATE projects SET owner = ? WHERE owner = ?", to, from);
    db.run("UPDATE events SET agent_id = ? WHERE agent_id = ?", to, from);
    db.run("UPDATE events SET private_to = ? WHERE private_to = ?", to, from);
    db.run("UPDATE idempotency SET agent_id = ? WHERE agent_id = ?", to, from);
    db.run("UPDATE event_audience SET agent_id = ? WHERE agent_id = ?", to, from);
    db.run("UPDATE tasks SET created_by = ? WHERE created_by = ?", to, from);
    db.run("UPDATE tasks SET assigned_to = ? WHERE assigned_to = ?", to, from);
    db.run("UPDATE task_comments SET agent_id = ? WHERE agent_id = ?", to, from);
    db.run("UPDATE task_outcomes SET agent_id = ? WHERE agent_id = ?", to, from);
    db.run("UPDATE messages SET sender = ? WHERE sender = ?", to, from);
    // A direct message's address is the recipient's id; 'broadcast' and 'project:…' never match one.
    db.run("UPDATE messages SET recipient = ? WHERE recipient = ?", to, from);
    db.run("UPDATE message_recipients SET agent_id = ? WHERE agent_id = ?", to, from);
    db.run("UPDATE handoffs SET agent_id = ? WHERE agent_id = ?", to, from);
    db.run("UPDATE oauth_tokens SET agent_id = ? WHERE agent_id = ?", to, from);
    db.run("UPDATE graph_edges SET agent_id = ? WHERE agent_id = ?", to, from);
    db.run("UPDATE logs SET agent_id = ? WHERE agent_id = ?", to, from);
    db.run("UPDATE decisions SET agent_id = ? WHERE agent_id = ?", to, from);
    this.vectors.renameAgent(db, from, to);
  }

  async setCurrentProject(tx: Tx, agentId: string, projectId: string | null): Promise<void> {
    const db = connectionOf(tx);
    db.run("UPDATE agents SET current_project = ? WHERE agent_id = ?", projectId, agentId);
  }

  async clearCurrentProject(tx: Tx, agentId: string, projectId: string): Promise<void> {
    const db = connectionOf(tx);
    db.run("UPDATE agents SET current_project = NULL WHERE agent_id = ? AND current_project = ?", agentId, projectId);
  }

  async memorySeenAt(r: Reader, agentId: string): Promise<string | null> {
    const db = connectionOf(r);
    return db.get<{ memory_seen_at: string | null }>("SELECT memory_seen_at FROM agents WHERE agent_id = ?", agentId)?.memory_seen_at ?? null;
  }

  async setMemorySeenAt(tx: Tx, agentId: string, at: string): Promise<void> {
    const db = connectionOf(tx);
    db.run("UPDATE agents SET memory_seen_at = ? WHERE agent_id = ?", at, agentId);
  }
}
