import type { Db } from "./db.js";

/**
 * Who is looking. Every read query takes one, so visibility is applied inside SQL (and `limit`
 * counts only visible rows). Project membership comes from `project_members`.
 */
export interface Viewer {
  agentId: string;
  /** Roles `owner` and `archivist` see every project (never another agent's private entries). */
  allProjects: boolean;
}

export interface SqlFragment {
  sql: string;
  params: unknown[];
}

/** Rows of no project are everyone's; a project's rows are its members' (and the all-seeing roles'). */
export function visibleInProject(alias: string, viewer: Viewer): SqlFragment {
  return {
    sql: `(${alias}.project IS NULL OR ? = 1 OR ${alias}.project IN (SELECT project_id FROM project_members WHERE agent_id = ?))`,
    params: [viewer.allProjects ? 1 : 0, viewer.agentId],
  };
}

/** An agent sees global rows, rows of its projects, and its own private (`scope=agent`) entries. */
export function visibleMemory(alias: string, viewer: Viewer): SqlFragment {
  const project = visibleInProject(alias, viewer);
  return {
    sql: `((${alias}.scope = 'project' AND ${project.sql}) OR (${alias}.scope = 'agent' AND ${alias}.agent_id = ?))`,
    params: [...project.params, viewer.agentId],
  };
}

/**
 * The same rule for events: project events to members, private events to their one agent, and
 * events with an audience (messages) to exactly that audience.
 */
export function visibleEvent(alias: string, viewer: Viewer): SqlFragment {
  const project = visibleInProject(alias, viewer);
  return {
    sql: `((${alias}.private_to IS NULL OR ${alias}.private_to = ?) AND ${project.sql}
          AND (${alias}.restricted = 0 OR EXISTS (SELECT 1 FROM event_audience ea WHERE ea.event_seq = ${alias}.seq AND ea.agent_id = ?)))`,
    params: [viewer.agentId, ...project.params, viewer.agentId],
  };
}

export const memberProjectIds = (db: Db, agentId: string): string[] =>
  db
    .all<{ project_id: string }>("SELECT project_id FROM project_members WHERE agent_id = ?", agentId)
    .map((row) => row.project_id);

/**
 * The same rule in the vector index's terms: agents by the `vis_key`s they may see, roles that
 * see every project by `owner_key` (shared rows, plus their own private ones).
 */
export function vectorScope(db: Db, viewer: Viewer): { visKeys: string[] } | { ownerKeys: string[] } {
  if (viewer.allProjects) return { ownerKeys: ["", viewer.agentId] };
  return { visKeys: ["g", `a:${viewer.agentId}`, ...memberProjectIds(db, viewer.agentId).map((id) => `p:${id}`)] };
}

export const isProjectMember = (db: Db, projectId: string, agentId: string): boolean =>
  db.get("SELECT 1 FROM project_members WHERE project_id = ? AND agent_id = ?", projectId, agentId) !== undefined;
