import type { Role } from "../../wire/roles.js";
import type { AgentRow, AgentStore, NewAgentRow } from "../agents.js";
import type { Reader, Tx } from "../store.js";
import type { VectorIndex } from "../vectors.js";
import type { SqlDb } from "./dialect.js";

/** A table and its column that hold an agent's id. */
export type AgentColumn = readonly [table: string, column: string];

// Every record that names an agent, rewritten by a rename (the vector index's keys aside).
const AGENT_COLUMNS: readonly AgentColumn[] = [
  ["agents", "agent_id"],
  ["memory", "agent_id"],
  ["memory_readers", "agent_id"],
  ["project_members", "agent_id"],
  ["projects", "owner"],
  ["events", "agent_id"],
  ["events", "private_to"],
  ["idempotency", "agent_id"],
  ["event_audience", "agent_id"],
  ["tasks", "created_by"],
  ["tasks", "assigned_to"],
  ["task_comments", "agent_id"],
  ["task_outcomes", "agent_id"],
  ["messages", "sender"],
  // A direct message's address is the recipient's id; 'broadcast' and 'project:…' never match one.
  ["messages", "recipient"],
  ["message_recipients", "agent_id"],
  ["handoffs", "agent_id"],
  ["oauth_tokens", "agent_id"],
  ["oauth_grants", "agent_id"],
  ["oauth_grants", "created_by"],
  ["graph_edges", "agent_id"],
  ["logs", "agent_id"],
  ["decisions", "agent_id"],
  ["quota_buckets", "agent_id"],
  ["feeds", "agent_id"],
];

export class SqlAgents implements AgentStore {
  /** `backendColumns`: the columns naming an agent in tables only this backend has. */
  constructor(
    private readonly db: SqlDb,
    private readonly vectors: VectorIndex,
    private readonly backendColumns: readonly AgentColumn[] = [],
  ) {}

  async withRole(r: Reader, role: Role): Promise<string[]> {
    const rows = await this.db.all<{ agent_id: string }>(r, "SELECT agent_id FROM agents WHERE role = ? AND deleted_at IS NULL ORDER BY agent_id", role);
    return rows.map((row) => row.agent_id);
  }

  get(r: Reader, agentId: string): Promise<AgentRow | undefined> {
    return this.db.get<AgentRow>(r, "SELECT * FROM agents WHERE agent_id = ?", agentId);
  }

  lock(tx: Tx, agentId: string): Promise<AgentRow | undefined> {
    return this.db.get<AgentRow>(tx, `SELECT a.* FROM agents a WHERE a.agent_id = ?${this.db.dialect.lockRows(tx, "a")}`, agentId);
  }

  // The stand-in is the next id in order, or the last. Either way the query seeks the id index
  // twice and reads one agent's whole row from wherever it lies, so it touches as cold a row
  // whether or not the agent exists.
  forKeyCheck(r: Reader, agentId: string): Promise<(AgentRow & { found: 0 | 1 }) | undefined> {
    return this.db.get<AgentRow & { found: 0 | 1 }>(
      r,
      `SELECT a.*, CAST((a.agent_id = ?) AS INTEGER) AS found FROM agents a
     WHERE a.agent_id = COALESCE((SELECT agent_id FROM agents WHERE agent_id >= ? ORDER BY agent_id LIMIT 1), (SELECT max(agent_id) FROM agents))`,
      agentId,
      agentId,
    );
  }

  async insert(tx: Tx, row: NewAgentRow): Promise<void> {
    await this.db.run(
      tx,
      "INSERT INTO agents (agent_id, display_name, role, key_hash, key_source, created_at) VALUES (?, ?, ?, ?, ?, ?)",
      row.agent_id, row.display_name, row.role, row.key_hash, row.key_source, row.created_at,
    );
  }

  list(r: Reader, afterId: string | null, limit: number): Promise<AgentRow[]> {
    return this.db.all<AgentRow>(r, "SELECT * FROM agents WHERE deleted_at IS NULL AND agent_id > ? ORDER BY agent_id LIMIT ?", afterId ?? "", limit);
  }

  async liveIds(r: Reader): Promise<string[]> {
    const rows = await this.db.all<{ agent_id: string }>(r, "SELECT agent_id FROM agents WHERE deleted_at IS NULL ORDER BY agent_id");
    return rows.map((row) => row.agent_id);
  }

  async setKey(tx: Tx, agentId: string, keyHash: Buffer | null, source?: AgentRow["key_source"]): Promise<void> {
    if (source) await this.db.run(tx, "UPDATE agents SET key_hash = ?, key_source = ? WHERE agent_id = ?", keyHash, source, agentId);
    else await this.db.run(tx, "UPDATE agents SET key_hash = ? WHERE agent_id = ?", keyHash, agentId);
  }

  async restoreKey(tx: Tx, agentId: string, keyHash: Buffer, source: AgentRow["key_source"], role: Role): Promise<void> {
    await this.db.run(tx, "UPDATE agents SET key_hash = ?, key_source = ?, role = ?, deleted_at = NULL WHERE agent_id = ?", keyHash, source, role, agentId);
  }

  staticWithKeys(r: Reader): Promise<AgentRow[]> {
    return this.db.all<AgentRow>(r, "SELECT * FROM agents WHERE key_source = 'static' AND key_hash IS NOT NULL");
  }

  async setRole(tx: Tx, agentId: string, role: Role): Promise<void> {
    await this.db.run(tx, "UPDATE agents SET role = ? WHERE agent_id = ?", role, agentId);
  }

  async setDisplayName(tx: Tx, agentId: string, displayName: string | null): Promise<void> {
    await this.db.run(tx, "UPDATE agents SET display_name = ? WHERE agent_id = ?", displayName, agentId);
  }

  async touch(tx: Tx, agentId: string, at: string): Promise<void> {
    await this.db.run(tx, "UPDATE agents SET last_seen_at = ? WHERE agent_id = ?", at, agentId);
  }

  async markDeleted(tx: Tx, agentId: string, at: string): Promise<void> {
    await this.db.run(tx, "UPDATE agents SET key_hash = NULL, deleted_at = ?, current_project = NULL WHERE agent_id = ?", at, agentId);
  }

  async rename(tx: Tx, from: string, to: string): Promise<void> {
    for (const [table, column] of [...AGENT_COLUMNS, ...this.backendColumns]) {
      await this.db.run(tx, `UPDATE ${table} SET ${column} = ? WHERE ${column} = ?`, to, from);
    }
    await this.vectors.renameAgent(tx, from, to);
  }

  async setCurrentProject(tx: Tx, agentId: string, projectId: string | null): Promise<void> {
    await this.db.run(tx, "UPDATE agents SET current_project = ? WHERE agent_id = ?", projectId, agentId);
  }

  async clearCurrentProject(tx: Tx, agentId: string, projectId: string): Promise<void> {
    await this.db.run(tx, "UPDATE agents SET current_project = NULL WHERE agent_id = ? AND current_project = ?", agentId, projectId);
  }

  async memorySeenSeq(r: Reader, agentId: string): Promise<number> {
    return (await this.db.get<{ memory_seen_seq: number }>(r, "SELECT memory_seen_seq FROM agents WHERE agent_id = ?", agentId))?.memory_seen_seq ?? 0;
  }

  // Conditional, so two loads finishing together leave the later cursor whatever order they commit in.
  async advanceMemorySeenSeq(tx: Tx, agentId: string, seq: number): Promise<void> {
    await this.db.run(tx, "UPDATE agents SET memory_seen_seq = ? WHERE agent_id = ? AND memory_seen_seq < ?", seq, agentId, seq);
  }
}
