import { rowColumns } from "./row-columns.js";
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

export const HANDOFF_ROW_COLUMNS = rowColumns<HandoffRow>(
  "handoffs",
  { id: true, agent_id: true, host: true, summary: true, in_progress: true, next_steps: true, memory_refs: true, created_at: true },
  ["pk"],
);

export interface HandoffStore {
  insert(tx: Tx, row: HandoffRow): Promise<void>;
  last(r: Reader, agentId: string): Promise<HandoffRow | undefined>;
  /** The newest handoff of each agent not deleted, newest first; `beforePk` continues a previous page. */
  latest(r: Reader, beforePk: number | null, limit: number): Promise<(HandoffRow & { pk: number })[]>;
}
