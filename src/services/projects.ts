import type { Role } from "../core/config.js";
import { conflict, forbidden, invalid, notFound } from "../core/errors.js";
import { now } from "../core/time.js";
import type { Db } from "../store/db.js";
import { liveProjectMemory } from "../store/memory.js";
import { deleteProjectMessages } from "../store/messages.js";
import {
  addMember,
  clearCurrentProject,
  insertProject,
  listProjects,
  projectMembers,
  projectById,
  removeMember,
  setCurrentProject,
  type ProjectRow,
} from "../store/projects.js";
import { deleteProjectTasks } from "../store/tasks.js";
import { isProjectMember } from "../store/visibility.js";
import type { EventBus } from "../events/bus.js";
import { seesAllProjects, type Caller } from "./caller.js";
import type { MemoryService } from "./memory.js";
import { decodeCursor, pageOf, type Page } from "./paging.js";

export type Project = ProjectRow;

export interface ProjectMember {
  agent_id: string;
  role: Role;
  /** The project's owner (its creator). */
  project_owner: boolean;
  joined_at: string;
}

export interface ClearRequest {
  memory?: boolean | undefined;
  tasks?: boolean | undefined;
  messages?: boolean | undefined;
}

const SLUG = /^[a-z0-9][a-z0-9_-]{0,63}$/;

/** A project's id: its name lower-cased, runs of other characters turned into one dash. */
export function projectSlug(name: string): string {
  return name
    .normalize("NFKD")
    .toLowerCase()
    .replace(/[^a-z0-9_]+/g, "-")
    .replace(/^[-_]+|-+$/g, "")
    .slice(0, 64)
    .replace(/-+$/, "");
}

const isProjectId = (value: unknown): value is string => typeof value === "string";

export class ProjectService {
  constructor(
    private readonly db: Db,
    private readonly bus: EventBus,
    private readonly memory: MemoryService,
  ) {}

  private existing(id: string): ProjectRow {
    const project = projectById(this.db, id);
    if (!project) throw notFound("project");
    return project;
  }

  create(caller: Caller, input: { name: string; description?: string | undefined }): Project {
    const id = projectSlug(input.name);
    if (!SLUG.test(id)) throw invalid("name", "must contain a letter or digit");
    return this.db.write(() => {
      if (projectById(this.db, id)) throw conflict("project id taken");
      const at = now();
      insertProject(this.db, { id, name: input.name.trim(), description: input.description ?? "", owner: caller.agentId, created_at: at });
      this.bus.emit({ type: "project.created", agentId: caller.agentId, project: id, payload: { project: id, owner: caller.agentId } });
      this.joinInTransaction(caller, id, at);
      return this.existing(id);
    });
  }

  list(cursor: string | undefined, limit: number, memberId?: string): Page<Project> {
    const after = decodeCursor(cursor, isProjectId);
    return pageOf(listProjects(this.db, after, limit + 1, memberId), limit, (row) => row, (row) => row.id);
  }

  private joinInTransaction(caller: Caller, id: string, at: string): void {
    if (addMember(this.db, id, caller.agentId, at)) {
      this.bus.emit({ type: "project.joined", agentId: caller.agentId, project: id, payload: { project: id, agent_id: caller.agentId } });
    }
    setCurrentProject(this.db, caller.agentId, id);
  }

  /** Joins (idempotent) and makes it the caller's current project, where writes go by default. */
  join(caller: Caller, id: string): Project {
    return this.db.write(() => {
      this.existing(id);
      this.joinInTransaction(caller, id, now());
      return this.existing(id);
    });
  }

  leave(caller: Caller, id: string): void {
    this.db.write(() => {
      this.existing(id);
      clearCurrentProject(this.db, caller.agentId, id);
      if (removeMember(this.db, id, caller.agentId)) {
        this.bus.emit({ type: "project.left", agentId: caller.agentId, project: id, payload: { project: id, agent_id: caller.agentId } });
      }
    });
  }

  /** The agents that joined the project; for its members and the roles that see every project (404 otherwise). */
  members(caller: Caller, id: string): ProjectMember[] {
    const project = this.existing(id);
    if (!seesAllProjects(caller.role) && !isProjectMember(this.db, id, caller.agentId)) throw notFound("project");
    return projectMembers(this.db, id).map((row) => ({
      agent_id: row.agent_id,
      role: row.role,
      project_owner: row.agent_id === project.owner,
      joined_at: row.joined_at,
    }));
  }

  /**
   * Project owner only. Memory is soft-deleted entry by entry (each with its event, so mirrors and
   * the archivist follow); tasks and messages are removed. Returns what it removed.
   */
  clear(caller: Caller, id: string, what: ClearRequest): { memory: number; tasks: number; messages: number } {
    return this.db.write(() => {
      const project = this.existing(id);
      if (project.owner !== caller.agentId) throw forbidden("only the project's owner may clear it");
      const counts = { memory: 0, tasks: 0, messages: 0 };
      if (what.memory) {
        const rows = liveProjectMemory(this.db, id);
        for (const row of rows) this.memory.softDelete(caller, row, "cleared");
        counts.memory = rows.length;
      }
      if (what.tasks) counts.tasks = deleteProjectTasks(this.db, id);
      if (what.messages) counts.messages = deleteProjectMessages(this.db, id);
      this.bus.emit({ type: "project.cleared", agentId: caller.agentId, project: id, payload: { project: id, ...counts } });
      return counts;
    });
  }
}
