import type { IdRef } from "../core/ids.js";
import { rowColumns } from "./row-columns.js";
import type { Reader, Tx } from "./store.js";
import type { Viewpoint } from "./visibility.js";

export interface DecisionRow {
  pk: number;
  id: string;
  project: string | null;
  agent_id: string;
  task_id: string | null;
  decision: string;
  rationale: string;
  /** JSON array of `{option, reason_rejected}`. */
  alternatives: string;
  /** JSON array of entry ids. */
  memory_refs: string;
  /** JSON array. */
  tags: string;
  supersedes: string | null;
  superseded_by: string | null;
  created_at: string;
}

export const DECISION_ROW_COLUMNS = rowColumns<DecisionRow>("decisions", {
  pk: true, id: true, project: true, agent_id: true, task_id: true, decision: true, rationale: true, alternatives: true, memory_refs: true, tags: true,
  supersedes: true, superseded_by: true, created_at: true,
});

export type NewDecisionRow = Omit<DecisionRow, "pk">;

export interface DecisionFilters {
  /** null selects global decisions. */
  project?: string | null | undefined;
  /** The task's id, or a prefix of it. */
  task?: IdRef | undefined;
  /** The author. */
  agent?: string | undefined;
  tag?: string | undefined;
  /** Plain words (already stripped of syntax), every one of which must be in the decision or its rationale. */
  words?: string[] | undefined;
  includeSuperseded?: boolean | undefined;
}

/** Decisions with their tags and keyword index. A decision is never changed but for `superseded_by`. */
export interface DecisionStore {
  insert(tx: Tx, row: NewDecisionRow, tags: string[]): Promise<number>;
  byPk(r: Reader, pk: number): Promise<DecisionRow | undefined>;
  /** By exact id, whoever may see it (imports and the audit log decide for themselves). */
  byId(r: Reader, id: string): Promise<DecisionRow | undefined>;
  /**
   * Decisions visible to `viewpoint` by full id or prefix (at most 2). Read inside a transaction,
   * they are held until it ends, so a decision read to be superseded is superseded once.
   */
  findVisible(r: Reader, viewpoint: Viewpoint, match: IdRef): Promise<DecisionRow[]>;
  /** Sets `superseded_by` unless it is set already; false when it was. */
  markSuperseded(tx: Tx, pk: number, by: string): Promise<boolean>;
  /** Visible decisions, newest first; `after` continues a previous page. */
  list(r: Reader, viewpoint: Viewpoint, filters: DecisionFilters, after: { at: string; pk: number } | null, limit: number): Promise<DecisionRow[]>;
  /** Deletes a project's decisions (with their tags); returns how many. */
  deleteProject(tx: Tx, project: string): Promise<number>;
}
