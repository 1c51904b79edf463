import type { Role } from "../wire/roles.js";
import { rowColumns } from "./row-columns.js";
import type { Reader, Tx } from "./store.js";

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
  /** The `change_seq` of the last change the agent's context pack delivered (0: none yet). */
  memory_seen_seq: number;
}

export const AGENT_ROW_COLUMNS = rowColumns<AgentRow>("agents", {
  agent_id: true, display_name: true, role: true, key_hash: true, key_source: true, created_at: true,
  last_seen_at: true, current_project: true, deleted_at: true, memory_seen_seq: true,
});

export type NewAgentRow = Pick<AgentRow, "agent_id" | "display_name" | "role" | "key_hash" | "key_source" | "created_at">;

export interface AgentStore {
  get(r: Reader, agentId: string): Promise<AgentRow | undefined>;
  /** The ids of the live agents holding `role`. */
  withRole(r: Reader, role: Role): Promise<string[]>;
  /**
   * The agent's row, locked until the transaction ends (where transactions overlap): for changes
   * to the agent itself (rename, delete, a new key), so that of two racing, the second waits and
   * then finds the agent as the first left it (renamed away: no row).
   */
  lock(tx: Tx, agentId: string): Promise<AgentRow | undefined>;
  /**
   * The row a key check compares against: the agent's, or else a stand-in's, with `found` saying
   * which. Either way the same work is done, so a key check takes as long whether or not the agent
   * exists.
   */
  forKeyCheck(r: Reader, agentId: string): Promise<(AgentRow & { found: 0 | 1 }) | undefined>;
  insert(tx: Tx, row: NewAgentRow): Promise<void>;
  /** Live agents in id order, after `afterId` (keyset pagination). */
  list(r: Reader, afterId: string | null, limit: number): Promise<AgentRow[]>;
  /** Ids of every live agent, in order. */
  liveIds(r: Reader): Promise<string[]>;
  setKey(tx: Tx, agentId: string, keyHash: Buffer | null, source?: AgentRow["key_source"]): Promise<void>;
  /** Gives a (possibly deleted) agent a key again, from configuration or bootstrap. */
  restoreKey(tx: Tx, agentId: string, keyHash: Buffer, source: AgentRow["key_source"], role: Role): Promise<void>;
  staticWithKeys(r: Reader): Promise<AgentRow[]>;
  setRole(tx: Tx, agentId: string, role: Role): Promise<void>;
  setDisplayName(tx: Tx, agentId: string, displayName: string | null): Promise<void>;
  touch(tx: Tx, agentId: string, at: string): Promise<void>;
  /** Deleted agents keep their row (no key, marked deleted) so nobody can take over their id. */
  markDeleted(tx: Tx, agentId: string, at: string): Promise<void>;
  /** Rewrites every record that names `from`, the vector index's included. */
  rename(tx: Tx, from: string, to: string): Promise<void>;
  setCurrentProject(tx: Tx, agentId: string, projectId: string | null): Promise<void>;
  /** Clears the agent's current project only while it is `projectId`. */
  clearCurrentProject(tx: Tx, agentId: string, projectId: string): Promise<void>;
  /** Where the agent's memory cursor stands: the `change_seq` of the last change its context pack delivered. */
  memorySeenSeq(r: Reader, agentId: string): Promise<number>;
  /** Moves the memory cursor forward to `seq`; never back (a later cursor already there stays). */
  advanceMemorySeenSeq(tx: Tx, agentId: string, seq: number): Promise<void>;
}
