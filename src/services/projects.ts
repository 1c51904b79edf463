import { conflict, forbidden, invalid, notFound } from "../core/errors.js";
import { now } from "../core/time.js";
import type { ProjectRow } from "../store/projects.js";
import type { Reader, Store, Tx } from "../store/store.js";
import type { EventBus } from "../events/bus.js";
import { seesAllProjects, type Caller } from "./caller.js";
import type { MemoryWrites } from "./memory-writes.js";
import type { CopyWrites } from "./mesh/copy-writes.js";
import { isCopy } from "./mesh/copies.js";
import { decodeCursor, pageOf, type Page } from "./paging.js";
import type { Project, ProjectClearCounts, ProjectMember } from "../wire/projects.js";

export interface ClearRequest {
  memory?: boolean | undefined;
  tasks?: boolean | undefined;
  messages?: boolean | undefined;
  decisions?: boolean | undefined;
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
    private readonly store: Store,
    private readonly bus: EventBus,
    private readonly writes: MemoryWrites,
    private readonly copies: CopyWrites,
  ) {}

  private async requireProject(r: Reader, id: string): Promise<ProjectRow> {
    const project = await this.store.projects.byId(r, id);
    if (!project) throw notFound("project");
    return project;
  }

  async create(caller: Caller, input: { name: string; description?: string | undefined }): Promise<Project> {
    const id = projectSlug(input.name);
    if (!SLUG.test(id)) throw invalid("name", "must contain a letter or digit");
    return this.store.transaction(async (tx) => {
      if (await this.store.projects.byId(tx, id)) throw conflict("project id taken");
      const at = now();
      await this.store.projects.insert(tx, { id, name: input.name.trim(), description: input.description ?? "", owner: caller.agentId, created_at: at });
      await this.bus.emit(tx, { type: "project.created", agentId: caller.agentId, project: id, payload: { project: id, owner: caller.agentId } });
      await this.joinInTransaction(tx, caller, id, at);
      return this.requireProject(tx, id);
    });
  }

  async list(cursor: string | undefined, limit: number, memberId?: string): Promise<Page<Project>> {
    const after = decodeCursor(cursor, isProjectId);
    return pageOf(await this.store.projects.list(this.store.reader, after, limit + 1, memberId), limit, (row) => row, (row) => row.id);
  }

  private async joinInTransaction(tx: Tx, caller: Caller, id: string, at: string): Promise<void> {
    if (await this.store.projects.addMember(tx, id, caller.agentId, at)) {
      await this.bus.emit(tx, { type: "project.joined", agentId: caller.agentId, project: id, payload: { project: id, agent_id: caller.agentId } });
    }
    await this.store.agents.setCurrentProject(tx, caller.agentId, id);
  }

  /** Joins (idempotent) and makes it the caller's current project, where writes go by default. */
  join(caller: Caller, id: string): Promise<Project> {
    return this.store.transaction(async (tx) => {
      await this.requireProject(tx, id);
      await this.joinInTransaction(tx, caller, id, now());
      return this.requireProject(tx, id);
    });
  }

  leave(caller: Caller, id: string): Promise<void> {
    return this.store.transaction(async (tx) => {
      await this.requireProject(tx, id);
      await this.store.agents.clearCurrentProject(tx, caller.agentId, id);
      if (await this.store.projects.removeMember(tx, id, caller.agentId)) {
        await this.bus.emit(tx, { type: "project.left", agentId: caller.agentId, project: id, payload: { project: id, agent_id: caller.agentId } });
      }
    });
  }

  /** The agents that joined the project; for its members and the roles that see every project (404 otherwise). */
  async members(caller: Caller, id: string): Promise<ProjectMember[]> {
    const r = this.store.reader;
    const project = await this.requireProject(r, id);
    if (!seesAllProjects(caller.role) && !(await this.store.projects.isMember(r, id, caller.agentId))) throw notFound("project");
    return (await this.store.projects.members(r, id)).map((row) => ({
      agent_id: row.agent_id,
      role: row.role,
      project_owner: row.agent_id === project.owner,
      joined_at: row.joined_at,
    }));
  }

  /**
   * Project owner only. Memory is soft-deleted entry by entry (each with its event, so mirrors and
   * the archivist follow), and compile's anchors go with it; tasks, messages and decisions are
   * removed. Returns what it removed.
   */
  clear(caller: Caller, id: string, what: ClearRequest): Promise<ProjectClearCounts> {
    return this.store.transaction(async (tx) => {
      const project = await this.requireProject(tx, id);
      if (project.owner !== caller.agentId) throw forbidden("only the project's owner may clear it");
      const counts = { memory: 0, tasks: 0, messages: 0, decisions: 0 };
      if (what.memory) {
        const rows = await this.store.memory.projectShared(tx, id);
        for (const row of rows) {
          // A peer's copy is not this instance's to delete: it is hidden here, its version left the origin's.
          if (isCopy(row)) await this.copies.suppress(tx, caller.agentId, row, "cleared");
          else await this.writes.softDelete(tx, caller.agentId, row, "cleared");
        }
        counts.memory = rows.length;
        // The compiled entries went with the rest: their anchors would describe nothing.
        await this.store.compile.deleteProject(tx, id);
      }
      if (what.tasks) counts.tasks = await this.store.tasks.deleteProject(tx, id);
      if (what.messages) counts.messages = await this.store.messages.deleteProject(tx, id);
      if (what.decisions) counts.decisions = await this.store.decisions.deleteProject(tx, id);
      await this.bus.emit(tx, { type: "project.cleared", agentId: caller.agentId, project: id, payload: { project: id, ...counts } });
      return counts;
    });
  }
}
