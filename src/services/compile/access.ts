import { notFound } from "../../core/errors.js";
import type { Store } from "../../store/store.js";
import { checkProjectWrite } from "../access.js";
import { seesAllProjects, type Caller } from "../caller.js";

// Whose compile is it: a project's anchors and compiled entries are its members' (CONTRACT §18).
// `project` omitted means the caller's current project; null means global code, everyone's.

async function chosen(store: Store, caller: Caller, project: string | null | undefined): Promise<string | null> {
  return project === undefined ? ((await store.agents.get(store.reader, caller.agentId))?.current_project ?? null) : project;
}

/** The project a compile writes into; a non-member is refused as for any write (403). */
export async function projectToWrite(store: Store, caller: Caller, project: string | null | undefined): Promise<string | null> {
  const resolved = await chosen(store, caller, project);
  await checkProjectWrite(store.projects, store.reader, caller, resolved);
  return resolved;
}

/** The project a read looks into; one the caller is not in is 404, as if it did not exist. */
export async function projectToRead(store: Store, caller: Caller, project: string | null | undefined): Promise<string | null> {
  const resolved = await chosen(store, caller, project);
  if (resolved === null) return null;
  const visible = seesAllProjects(caller.role)
    ? (await store.projects.byId(store.reader, resolved)) !== undefined
    : await store.projects.isMember(store.reader, resolved, caller.agentId);
  if (!visible) throw notFound("project");
  return resolved;
}
