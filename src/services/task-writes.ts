import { newId } from "../core/ids.js";
import { notFound } from "../core/errors.js";
import { now } from "../core/time.js";
import type { EventBus } from "../events/bus.js";
import type { Reader, Store, Tx } from "../store/store.js";
import type { TaskPatch, TaskRow } from "../store/tasks.js";
import type { TaskChange } from "../wire/task-inputs.js";
import type { CommentKind, TaskComment } from "../wire/tasks.js";
import { openTaskRow, taskEventFields, type OpenTaskFields, type TaskEvent } from "./task-records.js";

/** A task named in another's dependencies: its key and the id its comment names. */
export type TaskRef = Pick<TaskRow, "pk" | "id">;

/**
 * A task's writes inside a caller's transaction, each with the event that announces it: what
 * `TaskService`'s operations and a blueprint run's engine both write through, so no change to a
 * task goes unannounced whichever of them makes it. Checks (who may, from which status) are the
 * caller's.
 */
export class TaskWrites {
  constructor(
    private readonly store: Store,
    private readonly bus: EventBus,
  ) {}

  /** The event's project is its task's. */
  async emit(tx: Tx, actor: string, event: TaskEvent): Promise<void> {
    await this.bus.emit(tx, { ...event, agentId: actor, project: event.payload.project });
  }

  async logComment(tx: Tx, row: TaskRow, agentId: string, kind: CommentKind, comment: string, at: string): Promise<TaskComment> {
    const entry = { id: newId(), agent_id: agentId, kind, comment, created_at: at };
    await this.store.tasks.insertComment(tx, row.pk, entry);
    return { ...entry, task_id: row.id };
  }

  /** The task as it is now, after this transaction's own writes. */
  async reread(r: Reader, pk: number): Promise<TaskRow> {
    const row = await this.store.tasks.byPk(r, pk);
    if (!row) throw notFound("task");
    return row;
  }

  /** A new open task waiting for `dependencies`, and `task.created`. */
  async createIn(tx: Tx, actor: string, fields: OpenTaskFields, dependencies: readonly number[]): Promise<TaskRow> {
    const pk = await this.store.tasks.insert(tx, openTaskRow(fields), fields.tags, [...new Set(dependencies)]);
    const row = await this.reread(tx, pk);
    await this.emit(tx, actor, { type: "task.created", payload: { ...taskEventFields(row), created_by: row.created_by } });
    return row;
  }

  /** Sets what `change` changes; `task.updated` names the fields that changed (none changed: nothing written). */
  async changeIn(tx: Tx, actor: string, row: TaskRow, change: TaskChange): Promise<TaskRow> {
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
    if (changed.length === 0) return row;
    await this.store.tasks.patch(tx, row.pk, { ...candidate, updated_at: now() });
    if (tags !== undefined) await this.store.tasks.replaceTags(tx, row.pk, tags);
    const updated = await this.reread(tx, row.pk);
    await this.emit(tx, actor, { type: "task.updated", payload: { ...taskEventFields(updated), changed } });
    return updated;
  }

  /**
   * Makes task `pk` wait for each of `dependencies` it did not already: one comment and one
   * `task.updated` for those added. The task as it is then; undefined when none was added.
   */
  async dependIn(tx: Tx, actor: string, pk: number, dependencies: readonly TaskRef[]): Promise<TaskRow | undefined> {
    const added: string[] = [];
    for (const dependency of dependencies) if (await this.store.tasks.addDependency(tx, pk, dependency.pk)) added.push(dependency.id);
    if (added.length === 0) return undefined;
    return this.dependenciesChanged(tx, actor, pk, `${added.length === 1 ? "dependency" : "dependencies"} added: ${added.join(", ")}`);
  }

  /** Stops task `pk` waiting for `dependency`, with its comment and `task.updated`; undefined when it was not waiting for it. */
  async undependIn(tx: Tx, actor: string, pk: number, dependency: TaskRef): Promise<TaskRow | undefined> {
    if (!(await this.store.tasks.removeDependency(tx, pk, dependency.pk))) return undefined;
    return this.dependenciesChanged(tx, actor, pk, `dependency removed: ${dependency.id}`);
  }

  private async dependenciesChanged(tx: Tx, actor: string, pk: number, comment: string): Promise<TaskRow> {
    const at = now();
    await this.store.tasks.patch(tx, pk, { updated_at: at });
    const updated = await this.reread(tx, pk);
    const entry = await this.logComment(tx, updated, actor, "comment", comment, at);
    await this.emit(tx, actor, { type: "task.updated", payload: { ...taskEventFields(updated), changed: ["depends_on"], comment_id: entry.id } });
    return updated;
  }
}
