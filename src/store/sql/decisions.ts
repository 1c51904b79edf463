import type { DecisionFilters } from "../decisions.js";
import type { Viewpoint } from "../visibility.js";
import { idMatch, visibleInProject, type SqlFragment } from "./visibility.js";

/** Every column of a decision but PostgreSQL's generated keyword column `search`, which SQLite's table does not have. */
export const DECISION_COLUMNS = "d.pk, d.id, d.project, d.agent_id, d.task_id, d.decision, d.rationale, d.alternatives, d.memory_refs, d.tags, d.supersedes, d.superseded_by, d.created_at";

/**
 * The WHERE clause of a decision listing, as both stores run it: visibility, then each filter
 * given. Only the keyword match differs between them (FTS5, tsvector): `matching` writes it.
 */
export function decisionWhere(viewpoint: Viewpoint, filters: DecisionFilters, matching: (words: string[]) => SqlFragment): { where: string[]; params: unknown[] } {
  const visible = visibleInProject("d", viewpoint);
  const where = [visible.sql];
  const params: unknown[] = [...visible.params];
  const add = ({ sql, params: values }: SqlFragment): void => {
    where.push(sql);
    params.push(...values);
  };
  if (!filters.includeSuperseded) add({ sql: "d.superseded_by IS NULL", params: [] });
  if (filters.project === null) add({ sql: "d.project IS NULL", params: [] });
  else if (filters.project !== undefined) add({ sql: "d.project = ?", params: [filters.project] });
  if (filters.task !== undefined) add(idMatch("d.task_id", filters.task));
  if (filters.agent !== undefined) add({ sql: "d.agent_id = ?", params: [filters.agent] });
  if (filters.tag !== undefined) add({ sql: "d.pk IN (SELECT decision_pk FROM decision_tags WHERE tag = ?)", params: [filters.tag] });
  if (filters.words !== undefined) add(matching(filters.words));
  return { where, params };
}
