import { forbidden, notFound } from "../core/errors.js";
import type { ProjectStore } from "../store/projects.js";
import type { Reader } from "../store/store.js";
import { seesAllProjects, type Caller } from "./caller.js";

/**
 * Checks a write into `project`: the writer must be a member (403) unless its role sees every
 * project, and then the project must exist (404). A plain agent gets the same 403 for a project
 * that does not exist, so the check reveals nothing about which ids are taken.
 */
export async function checkProjectWrite(projects: ProjectStore, r: Reader, caller: Caller, project: string | null): Promise<void> {
  if (project === null) return;
  if (!seesAllProjects(caller.role)) {
    if (!(await projects.isMember(r, project, caller.agentId))) throw forbidden("not a member of this project");
    return;
  }
  if (!(await projects.byId(r, project))) throw notFound("project");
}
