import type { Role } from "../core/config.js";
import type { Db } from "./db.js";

export interface AgentRow {
  agent_id: string;
  display_name: string | null;
  role: Role;
  key_hash: Buffer | null;
  key_source: "generated" | "static" | "bootstrap";
  created_at: string;
  last_seen_at: string | null;
  current_project: string | null;
  deleted_at: string | null;
  memory_seen_at: string | null;
}

export const getAgentRow = (db: Db, agentId: string): AgentRow | undefined =>
  db.get<AgentRow>("SELECT * FROM agents WHERE agent_id = ?", agentId);

/**
 * The row a key check compares against: the agent's, or else a stand-in's (the next id in order,
 * or the last), with `found` saying which. Either way the query seeks the id index twice and reads
 * one agent's whole row from wherever it lies, so a key check takes the same work, and touches as
 * cold a row, whether or not the agent exists.
 */
export const agentForKeyCheck = (db: Db, agentId: string): (AgentRow & { found: 0 | 1 }) | undefined =>
  db.get<AgentRow & { found: 0 | 1 }>(
    `SELECT a.*, a.agent_id = ? AS found FROM agents a
     WHERE a.agent_id = COALESCE((SELECT agent_id FROM agents WHERE agent_id >= ? ORDER BY agent_id LIMIT 1), (SELECT max(agent_id) FROM agents))`,
    agentId,
    agentId,
  );

export function insertAgent(
  db: Db,
  row: Pick<AgentRow, "agent_id" | "display_name" | "role" | "key_hash" | "key_source" | "created_at">,
): void {
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

/** Live agents in id order, after `afterId` (keyset pagination). */
export const listAgentRows = (db: Db, afterId: string | null, limit: number): AgentRow[] =>
  db.all<AgentRow>(
    "SELECT * FROM agents WHERE deleted_at IS NULL AND agent_id > ? ORDER BY agent_id LIMIT ?",
    afterId ?? "",
    limit,
  );

export const setAgentKey = (db: Db, agentId: string, keyHash: Buffer | null, source?: AgentRow["key_source"]): void => {
  if (source) db.run("UPDATE agents SET key_hash = ?, key_source = ? WHERE agent_id = ?", keyHash, source, agentId);
  else db.run("UPDATE agents SET key_hash = ? WHERE agent_id = ?", keyHash, agentId);
};

/** Gives a (possibly deleted) agent a key again, from configuration or bootstrap. */
export const restoreAgentKey = (db: Db, agentId: string, keyHash: Buffer, source: AgentRow["key_source"], role: Role): void => {
  db.run("UPDATE agents SET key_hash = ?, key_source = ?, role = ?, deleted_at = NULL WHERE agent_id = ?", keyHash, source, role, agentId);
};

export const staticAgentsWithKeys = (db: Db): AgentRow[] =>
  db.all<AgentRow>("SELECT * FROM agents WHERE key_source = 'static' AND key_hash IS NOT NULL");

export const setAgentRole = (db: Db, agentId: string, role: Role): void => {
  db.run("UPDATE agents SET role = ? WHERE agent_id = ?", role, agentId);
};

export const setDisplayName = (db: Db, agentId: string, displayName: string | null): void => {
  db.run("UPDATE agents SET display_name = ? WHERE agent_id = ?", displayName, agentId);
};

export const touchAgent = (db: Db, agentId: string, at: string): void => {
  db.run("UPDATE agents SET last_seen_at = ? WHERE agent_id = ?", at, agentId);
};

/** Deleted agents keep their row (no key, marked deleted) so nobody can take over their id. */
export const markAgentDeleted = (db: Db, agentId: string, at: string): void => {
  db.run("UPDATE agents SET key_hash = NULL, deleted_at = ?, current_project = NULL WHERE agent_id = ?", at, agentId);
};

/** Rewrites every record that names `from` (the vector index is renamed by its own module). */
export function renameAgentRows(db: Db, from: string, to: string): void {
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
}
