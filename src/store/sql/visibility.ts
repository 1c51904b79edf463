import type { Viewpoint } from "../visibility.js";

// The visibility rule in SQL that SQLite and PostgreSQL both run (`?` parameters; each store binds
// them its way): every read of shared content applies it inside its query, so `limit`
// counts only rows the viewpoint may see. The vector index applies the same rule through its keys
// (sqlite/vectors.ts) and live event delivery in memory (src/events/subscription.ts).

export interface SqlFragment {
  sql: string;
  params: unknown[];
}

/** Rows of no project are everyone's; a project's rows are its members' (and the all-seeing roles'). */
export function visibleInProject(alias: string, viewpoint: Viewpoint): SqlFragment {
  return {
    sql: `(${alias}.project IS NULL OR ? = 1 OR ${alias}.project IN (SELECT project_id FROM project_members WHERE agent_id = ?))`,
    params: [viewpoint.allProjects ? 1 : 0, viewpoint.agentId],
  };
}

/** An agent sees global rows, rows of its projects, and its own private (`scope=agent`) entries. */
export function visibleMemory(alias: string, viewpoint: Viewpoint): SqlFragment {
  const project = visibleInProject(alias, viewpoint);
  return {
    sql: `((${alias}.scope = 'project' AND ${project.sql}) OR (${alias}.scope = 'agent' AND ${alias}.agent_id = ?))`,
    params: [...project.params, viewpoint.agentId],
  };
}

/**
 * The same rule for events: project events to members, private events to their one agent, and
 * events with an audience (messages) to exactly that audience.
 */
export function visibleEvent(alias: string, viewpoint: Viewpoint): SqlFragment {
  const project = visibleInProject(alias, viewpoint);
  return {
    sql: `((${alias}.private_to IS NULL OR ${alias}.private_to = ?) AND ${project.sql}
          AND (${alias}.restricted = 0 OR EXISTS (SELECT 1 FROM event_audience ea WHERE ea.event_seq = ${alias}.seq AND ea.agent_id = ?)))`,
    params: [viewpoint.agentId, ...project.params, viewpoint.agentId],
  };
}

/** An id equal to `id`, or starting with `prefix`: a range, so the primary key's index serves it. */
export function idMatch(column: string, match: { id: string } | { prefix: string }): SqlFragment {
  return "id" in match ? { sql: `${column} = ?`, params: [match.id] } : { sql: `${column} >= ? AND ${column} < ?`, params: [match.prefix, `${match.prefix}\uffff`] };
}
