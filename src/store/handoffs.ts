import type { Reader, Tx } from "./store.js";

export interface HandoffRow {
  id: string;
  agent_id: string;
  host: string | null;
  summary: string;
  in_progress: string;
  next_steps: string;
  memory_refs: string;
  created_at: string;
}

export interface HandoffStore {
  insert(tx: Tx, row: HandoffRow): Promise<void>;
  last(r: Reader, agentId: string): Promise<HandoffRow | undefined>;
  /** The newest handoff of each agent not deleted, newest first; `beforePk` continues a previous page. */
  latest(r: Reader, beforePk: number | null, limit: number): Promise<(HandoffRow & { pk: number })[]>;
}
