import type { Config } from "../core/config.js";
import { checkByteSize } from "../core/byte-size.js";
import { ambiguousIdPrefix, conflict, forbidden, invalid, notFound } from "../core/errors.js";
import { parseIdRef } from "../core/ids.js";
import { addSeconds, now } from "../core/time.js";
import type { Reader, Store, Tx } from "../store/store.js";
import type { TaskFilters, TaskPatch, TaskRow } from "../store/tasks.js";
import type { EventBus } from "../events/bus.js";
import { checkProjectWrite } from "./access.js";
import { viewpointOf, type Caller } from "./caller.js";
import { decodeCursor, isKeyset, pageOf, type Page } from "./paging.js";
import { checkTransition } from "./task-lifecycle.js";
import { taskEventFields, toTask } from "./task-records.js";
import { TaskWrites } from "./task-writes.js";
import type { NewTask, TaskChange } from "../wire/task-inputs.js";
import { TASK_TRANSITIONS } from "../wire/task-lifecycle.js";
import type { RecommendedTask, Task, TaskComment, TaskCounts } from "../wire/tasks.js";
import { locks } from "./locks.js";

/** The actions only a claim's assignee may take (an owner may also unclaim). */
type AssigneeAction = "unclaim" | "complete" | "fail" | "heartbeat";

const MAX_OUTPUT_BYTES = 65536;
const LAPSE_BATCH = 500;

const isSeq = (value: unknown): value is number => Number.isSafeInteger(value);

/** How `closeIn` closes a task: its JSON output, whether an agent earned the outcome, the lifecycle's action. */
export interface CloseOptions {
  /** JSON output; undefined leaves what the task holds. */
  result?: string | null | undefined;
  earned?: boolean | undefined;
  action?: "complete" | "fail" | "pass" | "abandon" | undefined;
}

/** What blueprint runs (CONTRACT §17) add to a task's completion, inside its transaction. */
export interface TaskHooks {
  /** Refuses (422) an output that breaks the node's contract, before anything is written. */
  beforeComplete(tx: Tx, caller: Caller, row: TaskRow, output: unknown): Promise<void>;
  /**
   * What the run does next: fan out, retry, fail the run, open gates, finish the run. True when it
   * did any of that (and so may have changed the closed task too).
   */
  afterClose(tx: Tx, actor: string, row: TaskRow, outcome: "completed" | "failed"): Promise<boolean>;
}

export class TaskService {
  private hooks: TaskHooks | undefined;
  /** The in-transaction writes, with their events, that a blueprint run's engine shares. */
  readonly writes: TaskWrites;

  constructor(
    private readonly store: Store,
    bus: EventBus,
    private readonly config: Config,
  ) {
    this.writes = new TaskWrites(store, bus);
  }

  /** Blueprint runs hook in here once both services exist. */
  attachHooks(hooks: TaskHooks): void {
    this.hooks = hooks;
  }

  private checkDescription(description: string | undefined): void {
    if (description !== undefined) checkByteSize(description, this.config.MAX_CONTENT_BYTES, "description exceeds");
  }

  /** A task the caller can see, by full id or unique prefix; anything else is 404. Read in `tx`, it is held until `tx` ends. */
  async resolve(r: Reader, caller: Caller, ref: string, what = "task"): Promise<TaskRow> {
    const parsed = parseIdRef(ref);
    const rows = await this.store.tasks.findVisible(r, viewpointOf(caller), parsed);
    if (rows.length > 1) throw ambiguousIdPrefix();
    const row = rows[0];
    if (!row) throw notFound(what);
    return row;
  }

  private leaseFrom(at: string): string | null {
    return this.config.TASK_LEASE_SECONDS > 0 ? addSeconds(at, this.config.TASK_LEASE_SECONDS) : null;
  }

  async create(caller: Caller, input: NewTask): Promise<Task> {
    this.checkDescription(input.description);
    const project =
      input.project === undefined ? ((await this.store.agents.get(this.store.reader, caller.agentId))?.current_project ?? null) : input.project;
    return this.store.transaction(async (tx) => {
      await checkProjectWrite(this.store.projects, tx, caller, project);
      const dependencies: number[] = [];
      for (const ref of new Set(input.depends_on ?? [])) dependencies.push((await this.resolve(tx, caller, ref, "dependency")).pk);
      const assignee = input.assigned_to ?? null;
      if (assignee !== null) {
        const agent = await this.store.agents.get(tx, assignee);
        if (!agent || agent.deleted_at !== null) throw notFound("agent");
      }
      const fields = {
        title: input.title,
        description: input.description ?? "",
        created_by: caller.agentId,
        assigned_to: assignee,
        project,
        priority: input.priority ?? "normal",
        tags: [...new Set(input.tags ?? [])],
        due_at: input.due_at ?? null,
        expected_outcome: input.expected_outcome ?? null,
        at: now(),
      };
      const row = await this.writes.createIn(tx, caller.agentId, fields, dependencies);
      return toTask(row);
    });
  }

  async get(caller: Caller, ref: string): Promise<Task> {
    return toTask(await this.resolve(this.store.reader, caller, ref));
  }

  async list(caller: Caller, filters: TaskFilters & { cursor?: string | undefined; limit: number }): Promise<Page<Task>> {
    const after = decodeCursor(filters.cursor, isKeyset);
    const rows = await this.store.tasks.list(this.store.reader, viewpointOf(caller), filters, after, filters.limit + 1);
    return pageOf(rows, filters.limit, toTask, (row) => ({ at: row.created_at, pk: row.pk }));
  }

  counts(caller: Caller, filters: Omit<TaskFilters, "status" | "unblocked">): Promise<TaskCounts> {
    return this.store.tasks.count(this.store.reader, viewpointOf(caller), filters);
  }

  async recommended(caller: Caller, project: string | null | undefined, limit: number): Promise<RecommendedTask[]> {
    const rows = await this.store.tasks.recommended(this.store.reader, viewpointOf(caller), project, limit);
    return rows.map((row) => ({ ...toTask(row), affinity: row.affinity }));
  }

  /** Who may change a task (fields and dependencies): its creator, its assignee, an owner. */
  private checkMayChange(caller: Caller, row: TaskRow): void {
    if (caller.agentId !== row.created_by && caller.agentId !== row.assigned_to && caller.role !== "owner") {
      throw forbidden("only the task's creator, its assignee or an owner may change it");
    }
  }

  /** Title, description, priority, tags, due date, expected outcome: by creator, assignee or owner. */
  async update(caller: Caller, ref: string, change: TaskChange): Promise<Task> {
    this.checkDescription(change.description);
    return this.store.transaction(async (tx) => {
      const row = await this.resolve(tx, caller, ref);
      this.checkMayChange(caller, row);
      checkTransition("update", row.status);
      return toTask(await this.writes.changeIn(tx, caller.agentId, row, change));
    });
  }

  private checkClaimable(caller: Caller, row: TaskRow): void {
    if (row.gate === "timer" || row.gate === "task") throw forbidden("task is a gate the server completes");
    if (row.reserved === 1 && row.assigned_to !== caller.agentId) throw forbidden("task is reserved for another agent");
    checkTransition("claim", row.status);
    if (row.blocked === 1) throw conflict("task is blocked");
  }

  /**
   * Atomic: of any number of racing claimants exactly one wins; the rest get 409. A claim that
   * cannot succeed is refused before it queues for a write, so a crowd of losers costs no commits.
   */
  async claim(caller: Caller, ref: string, comment: string): Promise<Task> {
    this.checkClaimable(caller, await this.resolve(this.store.reader, caller, ref));
    return this.store.transaction(async (tx) => {
      const row = await this.resolve(tx, caller, ref);
      this.checkClaimable(caller, row);
      const at = now();
      const { from, to, refusal } = TASK_TRANSITIONS.claim;
      const patch: TaskPatch = { status: to, assigned_to: caller.agentId, claimed_at: at, lease_expires_at: this.leaseFrom(at), updated_at: at };
      if (!(await this.store.tasks.patch(tx, row.pk, patch, from[0]))) throw conflict(refusal);
      await this.writes.logComment(tx, row, caller.agentId, "claim", comment, at);
      const updated = await this.writes.reread(tx, row.pk);
      await this.writes.emit(tx, caller.agentId, { type: "task.claimed", payload: taskEventFields(updated) });
      return toTask(updated);
    });
  }

  /** The checks of unclaim, complete, fail and heartbeat, in the contract's order; `ownerMay`: an owner passes the last. */
  private async requireAssignee(r: Reader, caller: Caller, ref: string, action: AssigneeAction, ownerMay = false): Promise<TaskRow> {
    const row = await this.resolve(r, caller, ref);
    checkTransition(action, row.status);
    if (row.assigned_to !== caller.agentId && !(ownerMay && caller.role === "owner")) throw forbidden("only the task's assignee may do this");
    return row;
  }

  /** The patch that gives a claim back (a reserved task stays reserved for its assignee). */
  private releasePatch(row: TaskRow, at: string): TaskPatch {
    return {
      status: TASK_TRANSITIONS.unclaim.to,
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
    return this.store.transaction(async (tx) => {
      const row = await this.requireAssignee(tx, caller, ref, "unclaim", true);
      const byOwner = row.assigned_to !== caller.agentId;
      const at = now();
      await this.store.tasks.patch(tx, row.pk, this.releasePatch(row, at));
      const released = `released by ${caller.agentId}`;
      await this.writes.logComment(tx, row, caller.agentId, "unclaim", byOwner ? (comment === "" ? released : `${released}: ${comment}`) : comment, at);
      const updated = await this.writes.reread(tx, row.pk);
      await this.writes.emit(tx, caller.agentId, { type: "task.unclaimed", payload: taskEventFields(updated) });
      return toTask(updated);
    });
  }

  async complete(caller: Caller, ref: string, comment: string, output: unknown): Promise<Task> {
    const result = output === undefined ? null : JSON.stringify(output);
    if (result !== null) checkByteSize(result, MAX_OUTPUT_BYTES, "output exceeds");
    return this.finish(caller, ref, "completed", comment, result);
  }

  fail(caller: Caller, ref: string, comment: string): Promise<Task> {
    return this.finish(caller, ref, "failed", comment, undefined);
  }

  private finish(caller: Caller, ref: string, outcome: "completed" | "failed", comment: string, result: string | null | undefined): Promise<Task> {
    const action = outcome === "completed" ? "complete" : "fail";
    return this.store.transaction(async (tx) => {
      const row = await this.requireAssignee(tx, caller, ref, action);
      if (outcome === "completed") await this.hooks?.beforeComplete(tx, caller, row, result === null || result === undefined ? undefined : JSON.parse(result));
      return toTask(await this.closeIn(tx, caller.agentId, row, outcome, comment, { result, earned: true }));
    });
  }

  /**
   * Closes a task in `tx`: its status by the lifecycle table (`complete`, `fail`, or the server's
   * `pass` of a gate and `abandon` of a run's unfinished task), the log line, the event, the
   * outcome an agent earned (`earned`: an agent's own completion or failure, not the server's),
   * what a blueprint run does next, and `task.unblocked` for the dependents this frees. Returns
   * the task as it is then.
   */
  async closeIn(tx: Tx, actor: string, row: TaskRow, outcome: "completed" | "failed", comment: string, close: CloseOptions = {}): Promise<TaskRow> {
    const { result, earned = false, action = outcome === "completed" ? "complete" : "fail" } = close;
    checkTransition(action, row.status);
    // Before anything is written or announced: whether a dependent is now free is decided with
    // every other change to its dependencies either committed or waiting for this one.
    await this.store.tasks.lockDependents(tx, row.pk);
    const at = now();
    await this.store.tasks.patch(tx, row.pk, { status: TASK_TRANSITIONS[action].to, completed_at: at, lease_expires_at: null, updated_at: at, result });
    await this.writes.logComment(tx, row, actor, outcome === "completed" ? "complete" : "fail", comment, at);
    if (earned) {
      await this.store.tasks.insertOutcome(tx, { task_pk: row.pk, agent_id: actor, outcome, tags: row.tags, claimed_at: row.claimed_at ?? at, finished_at: at });
    }
    const updated = await this.writes.reread(tx, row.pk);
    await this.writes.emit(tx, actor, { type: outcome === "completed" ? "task.completed" : "task.failed", payload: taskEventFields(updated) });
    // A run may fan out (adding dependencies to what waits for this task) before anyone is told it is free.
    const runActed = action !== "abandon" && (await this.hooks?.afterClose(tx, actor, updated, outcome)) === true;
    if (outcome === "completed") await this.announceUnblocked(tx, actor, row);
    // Read again only if the run may have changed it: on PostgreSQL every statement from the event
    // on holds the events' lock.
    return runActed ? this.writes.reread(tx, row.pk) : updated;
  }

  /** `task.unblocked` for each open dependent whose last unfinished dependency was `row`. */
  async announceUnblocked(tx: Tx, actor: string, row: TaskRow): Promise<void> {
    for (const dependent of await this.store.tasks.unblockedDependents(tx, row.pk)) {
      await this.writes.emit(tx, actor, { type: "task.unblocked", payload: { ...taskEventFields(dependent), unblocked_by: row.id } });
    }
  }

  /** A completed or failed task back to open, by its creator or an owner. */
  reopen(caller: Caller, ref: string, comment: string): Promise<Task> {
    return this.store.transaction(async (tx) => {
      const row = await this.resolve(tx, caller, ref);
      if (caller.agentId !== row.created_by && caller.role !== "owner") throw forbidden("only the task's creator or an owner may reopen it");
      return toTask(await this.reopenIn(tx, caller.agentId, row, comment));
    });
  }

  /** Reopens a closed task in `tx` (a blueprint run's retry does it too). */
  async reopenIn(tx: Tx, actor: string, row: TaskRow, comment: string): Promise<TaskRow> {
    checkTransition("reopen", row.status);
    const at = now();
    await this.store.tasks.patch(tx, row.pk, { ...this.releasePatch(row, at), status: TASK_TRANSITIONS.reopen.to, completed_at: null });
    await this.writes.logComment(tx, row, actor, "reopen", comment, at);
    const updated = await this.writes.reread(tx, row.pk);
    await this.writes.emit(tx, actor, { type: "task.reopened", payload: taskEventFields(updated) });
    return updated;
  }

  /** Assignee only: pushes the claim's lease out by TASK_LEASE_SECONDS. */
  heartbeat(caller: Caller, ref: string): Promise<Task> {
    return this.store.transaction(async (tx) => {
      const row = await this.requireAssignee(tx, caller, ref, "heartbeat");
      const at = now();
      await this.store.tasks.patch(tx, row.pk, { lease_expires_at: this.leaseFrom(at) });
      return toTask(await this.writes.reread(tx, row.pk));
    });
  }

  async comments(caller: Caller, ref: string, cursor: string | undefined, limit: number): Promise<Page<TaskComment>> {
    const row = await this.resolve(this.store.reader, caller, ref);
    const after = decodeCursor(cursor, isSeq) ?? 0;
    const rows = await this.store.tasks.comments(this.store.reader, row.pk, after, limit + 1);
    return pageOf(rows, limit, ({ pk: _pk, ...comment }) => comment, (comment) => comment.pk);
  }

  addComment(caller: Caller, ref: string, comment: string): Promise<TaskComment> {
    return this.store.transaction(async (tx) => this.commentIn(tx, caller, await this.resolve(tx, caller, ref), comment));
  }

  /**
   * A free comment in the task's log, with its `task.commented` event, in the caller's transaction:
   * how an agent's comment and a decision's note on its task are both written.
   */
  async commentIn(tx: Tx, caller: Caller, row: TaskRow, comment: string): Promise<TaskComment> {
    checkTransition("comment", row.status);
    const entry = await this.writes.logComment(tx, row, caller.agentId, "comment", comment, now());
    await this.writes.emit(tx, caller.agentId, { type: "task.commented", payload: { ...taskEventFields(row), comment_id: entry.id, kind: "comment" } });
    return entry;
  }

  /** Blocks the task on another; the change is the task's, so it takes PATCH's permission and leaves a comment. */
  addDependency(caller: Caller, ref: string, dependencyRef: string): Promise<Task> {
    return this.store.transaction(async (tx) => {
      // Two new edges on disjoint tasks can close a cycle together: their cycle checks take turns,
      // each seeing what the other committed.
      await tx.lock(locks.taskDependencies());
      // A task is locked before the tasks that depend on it, as completing it does (closeIn).
      const dependency = await this.resolve(tx, caller, dependencyRef, "dependency");
      const row = await this.resolve(tx, caller, ref);
      this.checkMayChange(caller, row);
      checkTransition("addDependency", row.status);
      if (dependency.pk === row.pk) throw invalid("depends_on", "a task cannot depend on itself");
      if (await this.store.tasks.dependsTransitively(tx, dependency.pk, row.pk)) throw conflict("dependency cycle");
      return toTask((await this.writes.dependIn(tx, caller.agentId, row.pk, [dependency])) ?? row);
    });
  }

  removeDependency(caller: Caller, ref: string, dependencyRef: string): Promise<Task> {
    return this.store.transaction(async (tx) => {
      // The dependency first, as completing it locks it and then this task: whether this task was
      // blocked is read with the dependency already held, so a completion cannot slip between.
      const dependency = await this.resolve(tx, caller, dependencyRef, "dependency");
      const row = await this.resolve(tx, caller, ref);
      this.checkMayChange(caller, row);
      checkTransition("removeDependency", row.status);
      const updated = await this.writes.undependIn(tx, caller.agentId, row.pk, dependency);
      if (!updated) throw notFound("dependency");
      if (updated.status === "open" && updated.blocked === 0 && row.blocked === 1) {
        await this.writes.emit(tx, caller.agentId, { type: "task.unblocked", payload: taskEventFields(updated) });
      }
      return toTask(updated);
    });
  }

  /** Releases claims whose assignee went silent for TASK_LEASE_SECONDS; returns how many. */
  releaseLapsed(): Promise<number> {
    return this.store.transaction(async (tx) => {
      const at = now();
      const rows = await this.store.tasks.lapsedClaims(tx, at, LAPSE_BATCH);
      for (const row of rows) {
        const assignee = row.assigned_to ?? row.created_by;
        await this.store.tasks.patch(tx, row.pk, this.releasePatch(row, at));
        await this.writes.logComment(tx, row, assignee, "unclaim", "lease expired", at);
        await this.writes.emit(tx, assignee, { type: "task.unclaimed", payload: { ...taskEventFields(await this.writes.reread(tx, row.pk)), reason: "lease expired" } });
      }
      return rows.length;
    });
  }
}
