import type { Config } from "../core/config.js";
import { checkByteSize } from "../core/byte-size.js";
import { ambiguousIdPrefix, conflict, forbidden, invalid, notFound } from "../core/errors.js";
import { newId, parseIdRef } from "../core/ids.js";
import { addSeconds, now } from "../core/time.js";
import { getAgentRow } from "../store/agents.js";
import type { Db } from "../store/db.js";
import {
  addDependency,
  dependsTransitively,
  findVisibleTasks,
  insertComment,
  insertOutcome,
  insertTask,
  lapsedClaims,
  listComments,
  countTasks,
  listTasks,
  patchTask,
  recommendedTasks,
  removeDependency,
  replaceTaskTags,
  taskByPk,
  unblockedDependents,
  type CommentKind,
  type Priority,
  type TaskCountsRow,
  type TaskFilters,
  type TaskPatch,
  type TaskRow,
} from "../store/tasks.js";
import type { EventBus } from "../events/bus.js";
import { viewerOf, type Caller } from "./caller.js";
import { decodeCursor, isKeyset, pageOf, type Page } from "./paging.js";
import { checkProjectWrite } from "./projects.js";
import { toTask, type Task, type TaskComment } from "./task-records.js";

export interface CreateTaskInput {
  title: string;
  description?: string | undefined;
  priority?: Priority | undefined;
  tags?: string[] | undefined;
  due_at?: string | null | undefined;
  depends_on?: string[] | undefined;
  assigned_to?: string | null | undefined;
  project?: string | null | undefined;
  expected_outcome?: string | null | undefined;
}

export interface TaskChange {
  title?: string | undefined;
  description?: string | undefined;
  priority?: Priority | undefined;
  tags?: string[] | undefined;
  due_at?: string | null | undefined;
  expected_outcome?: string | null | undefined;
}

const MAX_OUTPUT_BYTES = 65536;
const LAPSE_BATCH = 500;

const isSeq = (value: unknown): value is number => Number.isSafeInteger(value);

export class TaskService {
  constructor(
    private readonly db: Db,
    private readonly bus: EventBus,
    private readonly config: Config,
  ) {}

  private checkDescription(description: string | undefined): void {
    if (description !== undefined) checkByteSize(description, this.config.MAX_CONTENT_BYTES, "description exceeds");
  }

  /** A task the caller can see, by full id or unique prefix; anything else is 404. */
  private resolve(caller: Caller, ref: string, what = "task"): TaskRow {
    const parsed = parseIdRef(ref);
    const rows = findVisibleTasks(this.db, viewerOf(caller), parsed.kind === "full" ? { id: parsed.id } : { prefix: parsed.prefix });
    if (rows.length > 1) throw ambiguousIdPrefix();
    const row = rows[0];
    if (!row) throw notFound(what);
    return row;
  }

  private fresh(pk: number): TaskRow {
    const row = taskByPk(this.db, pk);
    if (!row) throw notFound("task");
    return row;
  }

  private leaseFrom(at: string): string | null {
    return this.config.TASK_LEASE_SECONDS > 0 ? addSeconds(at, this.config.TASK_LEASE_SECONDS) : null;
  }

  private emit(type: string, actor: string, row: TaskRow, extra: Record<string, unknown> = {}): void {
    this.bus.emit({
      type,
      agentId: actor,
      project: row.project,
      payload: { task_id: row.id, project: row.project, status: row.status, assigned_to: row.assigned_to, ...extra },
    });
  }

  private record(row: TaskRow, agentId: string, kind: CommentKind, comment: string, at: string): TaskComment {
    const entry = { id: newId(), agent_id: agentId, kind, comment, created_at: at };
    insertComment(this.db, row.pk, entry);
    return { ...entry, task_id: row.id };
  }

  create(caller: Caller, input: CreateTaskInput): Promise<Task> {
    this.checkDescription(input.description);
    const project = input.project === undefined ? (getAgentRow(this.db, caller.agentId)?.current_project ?? null) : input.project;
    return this.db.writeSoon(() => {
      checkProjectWrite(this.db, caller, project);
      const dependencies = [...new Set(input.depends_on ?? [])].map((ref) => this.resolve(caller, ref, "dependency").pk);
      const assignee = input.assigned_to ?? null;
      if (assignee !== null) {
        const agent = getAgentRow(this.db, assignee);
        if (!agent || agent.deleted_at !== null) throw notFound("agent");
      }
      const at = now();
      const tags = [...new Set(input.tags ?? [])];
      const pk = insertTask(
        this.db,
        {
          id: newId(),
          title: input.title,
          description: input.description ?? "",
          status: "open",
          created_by: caller.agentId,
          assigned_to: assignee,
          reserved: assignee === null ? 0 : 1,
          project,
          priority: input.priority ?? "normal",
          tags: JSON.stringify(tags),
          due_at: input.due_at ?? null,
          expected_outcome: input.expected_outcome ?? null,
          result: null,
          created_at: at,
          updated_at: at,
          claimed_at: null,
          completed_at: null,
          lease_expires_at: null,
        },
        tags,
        dependencies,
      );
      const row = this.fresh(pk);
      this.emit("task.created", caller.agentId, row, { created_by: caller.agentId });
      return toTask(row);
    });
  }

  get(caller: Caller, ref: string): Task {
    return toTask(this.resolve(caller, ref));
  }

  list(caller: Caller, filters: TaskFilters & { cursor?: string | undefined; limit: number }): Page<Task> {
    const after = decodeCursor(filters.cursor, isKeyset);
    const rows = listTasks(this.db, viewerOf(caller), filters, after, filters.limit + 1);
    return pageOf(rows, filters.limit, toTask, (row) => ({ at: row.created_at, pk: row.pk }));
  }

  counts(caller: Caller, filters: Omit<TaskFilters, "status" | "unblocked">): TaskCountsRow {
    return countTasks(this.db, viewerOf(caller), filters);
  }

  recommended(caller: Caller, project: string | null | undefined, limit: number): (Task & { affinity: number })[] {
    return recommendedTasks(this.db, viewerOf(caller), project, limit).map((row) => ({ ...toTask(row), affinity: row.affinity }));
  }

  /** Who may change a task (fields and dependencies): its creator, its assignee, an owner. */
  private checkMayChange(caller: Caller, row: TaskRow): void {
    if (caller.agentId !== row.created_by && caller.agentId !== row.assigned_to && caller.role !== "owner") {
      throw forbidden("only the task's creator, its assignee or an owner may change it");
    }
  }

  /** Title, description, priority, tags, due date, expected outcome: by creator, assignee or owner. */
  update(caller: Caller, ref: string, change: TaskChange): Promise<Task> {
    this.checkDescription(change.description);
    return this.db.writeSoon(() => {
      const row = this.resolve(caller, ref);
      this.checkMayChange(caller, row);
      if (row.status === "completed" || row.status === "failed") throw conflict("task is closed");
      const tags = change.tags === undefined ? undefined : [...new Set(change.tags)];
      const candidate: TaskPatch = {
        title: change.title,
        description: change.description,
        priority: change.priority,
        tags: tags === undefined ? undefined : JSON.stringify(tags),
        due_at: change.due_at,
        expected_outcome: change.expected_outcome,
      };
      const changed = (Object.entries(candidate) as [keyof TaskRow, unknown][])
        .filter(([field, value]) => value !== undefined && value !== row[field])
        .map(([field]) => field);
      if (changed.length === 0) return toTask(row);
      patchTask(this.db, row.pk, { ...candidate, updated_at: now() });
      if (tags !== undefined) replaceTaskTags(this.db, row.pk, tags);
      const updated = this.fresh(row.pk);
      this.emit("task.updated", caller.agentId, updated, { changed });
      return toTask(updated);
    });
  }

  private checkClaimable(caller: Caller, row: TaskRow): void {
    if (row.reserved === 1 && row.assigned_to !== caller.agentId) throw forbidden("task is reserved for another agent");
    if (row.status !== "open") throw conflict("task not open");
    if (row.blocked === 1) throw conflict("task is blocked");
  }

  /**
   * Atomic: of any number of racing claimants exactly one wins; the rest get 409. A claim that
   * cannot succeed is refused before it queues for a write, so a crowd of losers costs no commits.
   */
  claim(caller: Caller, ref: string, comment: string): Promise<Task> {
    this.checkClaimable(caller, this.resolve(caller, ref));
    return this.db.writeSoon(() => {
      const row = this.resolve(caller, ref);
      this.checkClaimable(caller, row);
      const at = now();
      const claimed = patchTask(
        this.db,
        row.pk,
        { status: "claimed", assigned_to: caller.agentId, claimed_at: at, lease_expires_at: this.leaseFrom(at), updated_at: at },
        "open",
      );
      if (!claimed) throw conflict("task not open");
      this.record(row, caller.agentId, "claim", comment, at);
      const updated = this.fresh(row.pk);
      this.emit("task.claimed", caller.agentId, updated);
      return toTask(updated);
    });
  }

  /** The checks of unclaim, complete and fail, in the contract's order; `ownerMay`: an owner passes the last. */
  private assigneeOnly(caller: Caller, ref: string, ownerMay = false): TaskRow {
    const row = this.resolve(caller, ref);
    if (row.status !== "claimed") throw conflict("task not claimed");
    if (row.assigned_to !== caller.agentId && !(ownerMay && caller.role === "owner")) throw forbidden("only the task's assignee may do this");
    return row;
  }

  private release(row: TaskRow, at: string): TaskPatch {
    return {
      status: "open",
      assigned_to: row.reserved === 1 ? row.assigned_to : null,
      claimed_at: null,
      lease_expires_at: null,
      updated_at: at,
    };
  }

  /**
   * Gives a claim back: by its assignee, or by an owner releasing a claim stuck with an agent that
   * went away. The owner's release says so in the comment, ahead of any reason the owner gave.
   */
  unclaim(caller: Caller, ref: string, comment: string): Promise<Task> {
    return this.db.writeSoon(() => {
      const row = this.assigneeOnly(caller, ref, true);
      const byOwner = row.assigned_to !== caller.agentId;
      const at = now();
      patchTask(this.db, row.pk, this.release(row, at));
      const released = `released by ${caller.agentId}`;
      this.record(row, caller.agentId, "unclaim", byOwner ? (comment === "" ? released : `${released}: ${comment}`) : comment, at);
      const updated = this.fresh(row.pk);
      this.emit("task.unclaimed", caller.agentId, updated);
      return toTask(updated);
    });
  }

  complete(caller: Caller, ref: string, comment: string, output: unknown): Promise<Task> {
    const result = output === undefined ? null : JSON.stringify(output);
    if (result !== null) checkByteSize(result, MAX_OUTPUT_BYTES, "output exceeds");
    return this.finish(caller, ref, "completed", comment, result);
  }

  fail(caller: Caller, ref: string, comment: string): Promise<Task> {
    return this.finish(caller, ref, "failed", comment, undefined);
  }

  private finish(caller: Caller, ref: string, outcome: "completed" | "failed", comment: string, result: string | null | undefined): Promise<Task> {
    return this.db.writeSoon(() => {
      const row = this.assigneeOnly(caller, ref);
      const at = now();
      patchTask(this.db, row.pk, { status: outcome, completed_at: at, lease_expires_at: null, updated_at: at, result });
      this.record(row, caller.agentId, outcome === "completed" ? "complete" : "fail", comment, at);
      insertOutcome(this.db, {
        task_pk: row.pk,
        agent_id: caller.agentId,
        outcome,
        tags: row.tags,
        claimed_at: row.claimed_at ?? at,
        finished_at: at,
      });
      const updated = this.fresh(row.pk);
      this.emit(outcome === "completed" ? "task.completed" : "task.failed", caller.agentId, updated);
      if (outcome === "completed") {
        // Dependents whose last open dependency this was can now be claimed: tell waiting agents.
        for (const dependent of unblockedDependents(this.db, row.pk)) this.emit("task.unblocked", caller.agentId, dependent, { unblocked_by: row.id });
      }
      return toTask(updated);
    });
  }

  /** A completed or failed task back to open, by its creator or an owner. */
  reopen(caller: Caller, ref: string, comment: string): Promise<Task> {
    return this.db.writeSoon(() => {
      const row = this.resolve(caller, ref);
      if (caller.agentId !== row.created_by && caller.role !== "owner") throw forbidden("only the task's creator or an owner may reopen it");
      if (row.status !== "completed" && row.status !== "failed") throw conflict("task not closed");
      const at = now();
      patchTask(this.db, row.pk, { ...this.release(row, at), completed_at: null });
      this.record(row, caller.agentId, "reopen", comment, at);
      const updated = this.fresh(row.pk);
      this.emit("task.reopened", caller.agentId, updated);
      return toTask(updated);
    });
  }

  /** Assignee only: pushes the claim's lease out by TASK_LEASE_SECONDS. */
  heartbeat(caller: Caller, ref: string): Promise<Task> {
    return this.db.writeSoon(() => {
      const row = this.assigneeOnly(caller, ref);
      const at = now();
      patchTask(this.db, row.pk, { lease_expires_at: this.leaseFrom(at) });
      return toTask(this.fresh(row.pk));
    });
  }

  comments(caller: Caller, ref: string, cursor: string | undefined, limit: number): Page<TaskComment> {
    const row = this.resolve(caller, ref);
    const after = decodeCursor(cursor, isSeq) ?? 0;
    const rows = listComments(this.db, row.pk, after, limit + 1);
    return pageOf(rows, limit, ({ pk: _pk, ...comment }) => comment, (comment) => comment.pk);
  }

  addComment(caller: Caller, ref: string, comment: string): Promise<TaskComment> {
    return this.db.writeSoon(() => {
      const row = this.resolve(caller, ref);
      const at = now();
      const entry = this.record(row, caller.agentId, "comment", comment, at);
      this.emit("task.commented", caller.agentId, row, { comment_id: entry.id, kind: "comment" });
      return entry;
    });
  }

  /** Blocks the task on another; the change is the task's, so it takes PATCH's permission and leaves a comment. */
  addDependency(caller: Caller, ref: string, dependencyRef: string): Promise<Task> {
    return this.db.writeSoon(() => {
      const row = this.resolve(caller, ref);
      const dependency = this.resolve(caller, dependencyRef, "dependency");
      this.checkMayChange(caller, row);
      if (dependency.pk === row.pk) throw invalid("depends_on", "a task cannot depend on itself");
      if (dependsTransitively(this.db, dependency.pk, row.pk)) throw conflict("dependency cycle");
      if (addDependency(this.db, row.pk, dependency.pk)) {
        const at = now();
        patchTask(this.db, row.pk, { updated_at: at });
        const entry = this.record(row, caller.agentId, "comment", `dependency added: ${dependency.id}`, at);
        this.emit("task.updated", caller.agentId, this.fresh(row.pk), { changed: ["depends_on"], comment_id: entry.id });
      }
      return toTask(this.fresh(row.pk));
    });
  }

  removeDependency(caller: Caller, ref: string, dependencyRef: string): Promise<Task> {
    return this.db.writeSoon(() => {
      const row = this.resolve(caller, ref);
      const dependency = this.resolve(caller, dependencyRef, "dependency");
      this.checkMayChange(caller, row);
      if (!removeDependency(this.db, row.pk, dependency.pk)) throw notFound("dependency");
      const at = now();
      patchTask(this.db, row.pk, { updated_at: at });
      const entry = this.record(row, caller.agentId, "comment", `dependency removed: ${dependency.id}`, at);
      const updated = this.fresh(row.pk);
      this.emit("task.updated", caller.agentId, updated, { changed: ["depends_on"], comment_id: entry.id });
      if (updated.status === "open" && updated.blocked === 0 && row.blocked === 1) this.emit("task.unblocked", caller.agentId, updated);
      return toTask(updated);
    });
  }

  /** Releases claims whose assignee went silent for TASK_LEASE_SECONDS; returns how many. */
  releaseLapsed(): number {
    return this.db.write(() => {
      const at = now();
      const rows = lapsedClaims(this.db, at, LAPSE_BATCH);
      for (const row of rows) {
        const assignee = row.assigned_to ?? row.created_by;
        patchTask(this.db, row.pk, this.release(row, at));
        this.record(row, assignee, "unclaim", "lease expired", at);
        this.emit("task.unclaimed", assignee, this.fresh(row.pk), { reason: "lease expired" });
      }
      return rows.length;
    });
  }
}
