import type { DecisionRow } from "../store/decisions.js";
import type { Decision, DecisionAlternative } from "../wire/decisions.js";

/** The one mapping from a stored row to the decision clients see. */
export const toDecision = (row: DecisionRow): Decision => ({
  id: row.id,
  project: row.project,
  agent_id: row.agent_id,
  task_id: row.task_id,
  decision: row.decision,
  rationale: row.rationale,
  alternatives: JSON.parse(row.alternatives) as DecisionAlternative[],
  memory_refs: JSON.parse(row.memory_refs) as string[],
  tags: JSON.parse(row.tags) as string[],
  supersedes: row.supersedes,
  superseded_by: row.superseded_by,
  created_at: row.created_at,
});
