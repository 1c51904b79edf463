import type { Config } from "../../core/config.js";
import { invalid, invalidFields, type AppError, type FieldError } from "../../core/errors.js";
import { parseIdRef } from "../../core/ids.js";
import { addSeconds, now } from "../../core/time.js";
import type { EventBus } from "../../events/bus.js";
import type { Reader, Store, Tx } from "../../store/store.js";
import type { TaskRow } from "../../store/tasks.js";
import type { Viewpoint } from "../../store/visibility.js";
import type { BlueprintNode } from "../../wire/blueprints.js";
import { seesAllProjects, type Caller } from "../caller.js";
import { taskEventFields } from "../task-records.js";
import type { TaskRef } from "../task-writes.js";
import type { TaskHooks, TaskService } from "../tasks.js";
import { doneCheckProblems, type CheckReads } from "./checks.js";
import { outputProblems } from "./contracts.js";
import { durationMs } from "./duration.js";
import { foreachSource, mentionsOutputOf, renderNode, type RenderedNode } from "./plan.js";
import { valueAt } from "./template.js";
import { RunState } from "./run-state.js";
import { locks } from "../locks.js";

const DEFAULT_MAX_ATTEMPTS = 3;
const TIMER_BATCH = 100;

/** What a task of a node is made with. */
export interface NewRunTask {
  node: BlueprintNode;
  key: string;
  rendered: RenderedNode;
  dependencyPks: number[];
  item?: { value: unknown; index: number } | undefined;
  /** An assignee that does not exist: refuse (at instantiation) or leave the task unassigned (a later fan-out). */
  strictAssignee: boolean;
  /** The task a `task` gate waits for. */
  gateTaskPk?: number | null | undefined;
  anchors?: Record<string, string | null> | undefined;
}

const contractFailure = (errors: FieldError[]): AppError => invalidFields(errors, "output does not satisfy the node's contract");

/**
 * What makes a blueprint run go (CONTRACT §17), inside the transactions of its tasks: contracts
 * checked before a completion, fan-out expanded in the completing transaction with the fan-in
 * gaining its new dependencies there too, retries, failure of the run, gates the server opens, and
 * the run's own end. Nothing here runs SQL of a blueprint's making, a command or a request: a node
 * is data, rendered by lookup only.
 */
export class RunEngine implements TaskHooks {
  constructor(
    private readonly store: Store,
    private readonly bus: EventBus,
    private readonly config: Config,
    private readonly tasks: TaskService,
    private readonly reads: CheckReads,
  ) {}

  async emitRun(tx: Tx, actor: string, state: RunState, type: "blueprint.run.started" | "blueprint.run.completed" | "blueprint.run.cancelled"): Promise<void> {
    await this.bus.emit(tx, { type, agentId: actor, project: state.run.project, payload: this.runPayload(state) });
  }

  private runPayload(state: RunState): { run_id: string; blueprint_id: string; name: string; version: number; project: string | null } {
    const { run } = state;
    return { run_id: run.id, blueprint_id: run.blueprint_id, name: run.blueprint_name, version: run.blueprint_version, project: run.project };
  }

  private async reload(tx: Tx, state: RunState): Promise<RunState> {
    return (await RunState.load(this.store, tx, state.run.pk)) ?? state;
  }

  /** The viewpoint of the run's creator: what a gate or a later fan-out may refer to. */
  async creatorViewpoint(r: Reader, agentId: string): Promise<Viewpoint> {
    const agent = await this.store.agents.get(r, agentId);
    return { agentId, allProjects: agent ? seesAllProjects(agent.role) : false };
  }

  /** Creates one task of a run with its node row, and tells the board. */
  async createTask(tx: Tx, state: RunState, actor: string, spec: NewRunTask): Promise<TaskRow> {
    const { node, rendered } = spec;
    const gate = node.gate?.kind ?? null;
    let assignee = gate === "human" ? this.config.UI_AGENT_ID : rendered.assign_to;
    if (assignee !== null && gate !== "human") {
      const agent = await this.store.agents.get(tx, assignee);
      if (!agent || agent.deleted_at !== null) {
        if (spec.strictAssignee) throw invalid(`nodes.${node.id}.assign_to`, `no agent ${assignee}`);
        assignee = null;
      }
    }
    const task = await this.tasks.writes.createIn(
      tx,
      actor,
      {
        title: rendered.title,
        description: rendered.description,
        created_by: state.run.created_by,
        assigned_to: assignee,
        project: state.run.project,
        priority: node.priority ?? "normal",
        tags: rendered.tags,
        due_at: null,
        expected_outcome: null,
        at: now(),
        run_id: state.run.id,
        node_key: spec.key,
        gate,
      },
      spec.dependencyPks,
    );
    await this.store.blueprintRuns.insertNode(tx, {
      run_pk: state.run.pk,
      node_id: node.id,
      key: spec.key,
      task_pk: task.pk,
      state: "task",
      item: spec.item === undefined ? null : JSON.stringify(spec.item.value ?? null),
      item_index: spec.item?.index ?? null,
      attempt: 1,
      anchors: JSON.stringify(spec.anchors ?? {}),
      gate_task_pk: spec.gateTaskPk ?? null,
    });
    return task;
  }

  /** The task a `task` gate waits for, as the run's creator sees it; undefined when it sees none. */
  async gateTarget(r: Reader, viewpoint: Viewpoint, taskId: string): Promise<number | undefined> {
    const rows = await this.store.tasks.findVisible(r, viewpoint, parseIdRef(taskId, "task_id"));
    return rows.length === 1 ? rows[0]?.pk : undefined;
  }

  /** The current shas of the anchors a node's `anchor_changed` checks name, to compare at completion. */
  async anchorShas(r: Reader, project: string | null, node: BlueprintNode): Promise<Record<string, string | null>> {
    const shas: Record<string, string | null> = {};
    for (const check of node.done_check ?? []) if (check.kind === "anchor_changed") shas[check.anchor] = await this.reads.anchorSha(r, project, check.anchor);
    return shas;
  }

  async beforeComplete(tx: Tx, caller: Caller, row: TaskRow, output: unknown): Promise<void> {
    if (row.run_id === null) return;
    const nodeRow = await this.store.blueprintRuns.nodeOfTask(tx, row.pk);
    if (!nodeRow) return;
    const state = await RunState.load(this.store, tx, nodeRow.run_pk);
    if (!state) return;
    const node = state.node(nodeRow.node_id);
    const problems: FieldError[] = [];
    if (node.output_schema !== undefined) problems.push(...outputProblems(node.output_schema, output));
    for (const fanOut of state.document.nodes) {
      const source = foreachSource(fanOut);
      if (source?.kind !== "output" || source.node !== node.id || !fanOut.foreach) continue;
      const items = valueAt(output, source.path);
      const path = ["output", ...source.path].join(".");
      if (!Array.isArray(items)) problems.push({ path, message: `must be a list: node ${fanOut.id} fans out over it` });
      else if (items.length > fanOut.foreach.max_items) problems.push({ path, message: `at most ${fanOut.foreach.max_items} items: node ${fanOut.id} fans out over it` });
    }
    problems.push(...(await doneCheckProblems(this.reads, tx, caller, { project: state.run.project, claimedAt: row.claimed_at, anchors: JSON.parse(nodeRow.anchors) as Record<string, string | null> }, node.done_check ?? [])));
    if (problems.length > 0) throw contractFailure(problems);
  }

  async afterClose(tx: Tx, actor: string, row: TaskRow, outcome: "completed" | "failed"): Promise<boolean> {
    let acted = false;
    if (outcome === "completed") {
      for (const gate of await this.store.blueprintRuns.gatesWaitingOn(tx, row.pk)) {
        const run = await this.store.blueprintRuns.byPk(tx, gate.run_pk);
        if (!run) continue;
        await tx.lock(locks.blueprintRun(run.id));
        await this.settle(tx, actor, gate.run_pk);
        acted = true;
      }
    }
    if (row.run_id === null) return acted;
    const nodeRow = await this.store.blueprintRuns.nodeOfTask(tx, row.pk);
    if (!nodeRow) return acted;
    // Completions in one run take turns, so a fan-out or the run's end is decided once.
    await tx.lock(locks.blueprintRun(row.run_id));
    const state = await RunState.load(this.store, tx, nodeRow.run_pk);
    if (!state || state.run.status !== "running") return acted;
    const node = state.node(nodeRow.node_id);
    if (outcome === "completed") {
      await this.expandFrom(tx, actor, state, node, row);
      await this.rerenderAfter(tx, actor, state, node);
    } else {
      const policy = node.on_fail ?? "stop";
      const max = node.max_attempts ?? DEFAULT_MAX_ATTEMPTS;
      if (policy === "retry" && nodeRow.attempt < max) {
        await this.store.blueprintRuns.patchNode(tx, nodeRow.pk, { attempt: nodeRow.attempt + 1 });
        await this.tasks.reopenIn(tx, actor, row, `retry ${nodeRow.attempt + 1}/${max}`);
        await this.store.blueprintRuns.touch(tx, state.run.pk, now());
        return true;
      }
      if (policy !== "continue") {
        await this.failRun(tx, actor, state, nodeRow.key);
        return true;
      }
      await this.goOnWithout(tx, actor, state, node, row);
    }
    await this.settle(tx, actor, state.run.pk);
    return true;
  }

  /** Fans out every node whose items come from `node`'s output (zero items: skipped). */
  private async expandFrom(tx: Tx, actor: string, state: RunState, node: BlueprintNode, row: TaskRow | null): Promise<void> {
    const output = row?.result ? (JSON.parse(row.result) as unknown) : undefined;
    for (const fanOut of state.document.nodes) {
      const source = foreachSource(fanOut);
      if (source?.kind !== "output" || source.node !== node.id) continue;
      const items = valueAt(output, source.path);
      await this.expand(tx, actor, await this.reload(tx, state), fanOut, Array.isArray(items) ? items : []);
    }
  }

  /**
   * One task per item of a fan-out node, each waiting for what the node needs; every task that
   * needs the node gains them all as dependencies, in this same transaction.
   */
  async expand(tx: Tx, actor: string, state: RunState, fanOut: BlueprintNode, items: readonly unknown[]): Promise<void> {
    const pending = state.nodes.find((row) => row.node_id === fanOut.id && row.state === "pending");
    if (!pending) return;
    if (items.length === 0) {
      await this.store.blueprintRuns.patchNode(tx, pending.pk, { state: "skipped" });
      // A skipped node stands aside: what needed it now waits for what it needed.
      const inherited: TaskRef[] = [];
      for (const pk of (await this.reload(tx, state)).dependencyPks(fanOut)) inherited.push(await this.tasks.writes.reread(tx, pk));
      await this.dependentsWait(tx, actor, state, fanOut, inherited);
      return;
    }
    await this.store.blueprintRuns.deleteNode(tx, pending.pk);
    const dependencies = state.dependencyPks(fanOut);
    const context = state.context(await this.outputs(tx, state));
    const viewpoint = await this.creatorViewpoint(tx, state.run.created_by);
    const created: TaskRef[] = [];
    for (const [index, value] of items.entries()) {
      const item = { value, index };
      created.push(
        await this.createTask(tx, state, actor, {
          node: fanOut,
          key: `${fanOut.id}[${index}]`,
          rendered: renderNode(fanOut, state.run.blueprint_name, context, item),
          dependencyPks: dependencies,
          item,
          strictAssignee: false,
          gateTaskPk: fanOut.gate?.kind === "task" ? ((await this.gateTarget(tx, viewpoint, fanOut.gate.task_id)) ?? null) : null,
          anchors: await this.anchorShas(tx, state.run.project, fanOut),
        }),
      );
    }
    await this.dependentsWait(tx, actor, state, fanOut, created);
  }

  /** Every task that needs `node` waits for `tasks` too. */
  private async dependentsWait(tx: Tx, actor: string, state: RunState, node: BlueprintNode, tasks: readonly TaskRef[]): Promise<void> {
    for (const dependent of state.dependentsOf(node.id)) if (dependent.task_pk !== null) await this.tasks.writes.dependIn(tx, actor, dependent.task_pk, tasks);
  }

  /** The outputs of the run's completed tasks of nodes that are not fan-outs, by node id. */
  private async outputs(r: Reader, state: RunState): Promise<Map<string, unknown>> {
    const outputs = new Map<string, unknown>();
    for (const row of state.nodes) {
      if (row.task_pk === null || row.task_status !== "completed" || state.byId.get(row.node_id)?.foreach) continue;
      const task = await this.store.tasks.byPk(r, row.task_pk);
      outputs.set(row.node_id, task?.result ? (JSON.parse(task.result) as unknown) : null);
    }
    return outputs;
  }

  /** Renders again the open tasks whose text names `node`'s output, now that it is known. */
  private async rerenderAfter(tx: Tx, actor: string, state: RunState, node: BlueprintNode): Promise<void> {
    const fresh = await this.reload(tx, state);
    const waiting = fresh.nodes.filter((row) => row.task_pk !== null && row.task_status === "open" && mentionsOutputOf(fresh.node(row.node_id), node.id));
    if (waiting.length === 0) return;
    const context = fresh.context(await this.outputs(tx, fresh));
    for (const row of waiting) {
      const item = row.item_index === null ? undefined : { value: row.item === null ? null : (JSON.parse(row.item) as unknown), index: row.item_index };
      const rendered = renderNode(fresh.node(row.node_id), fresh.run.blueprint_name, context, item);
      const task = await this.tasks.writes.reread(tx, row.task_pk as number);
      await this.tasks.writes.changeIn(tx, actor, task, { title: rendered.title, description: rendered.description });
    }
  }

  /** `on_fail: continue`: what waited for the failed task goes on without it, and fan-outs from it have no items. */
  private async goOnWithout(tx: Tx, actor: string, state: RunState, node: BlueprintNode, row: TaskRow): Promise<void> {
    const freed: number[] = [];
    for (const other of state.nodes) {
      if (other.task_pk === null || other.task_pk === row.pk) continue;
      if (await this.tasks.writes.undependIn(tx, actor, other.task_pk, row)) freed.push(other.task_pk);
    }
    await this.expandFrom(tx, actor, state, node, null);
    for (const pk of freed) {
      const dependent = await this.store.tasks.byPk(tx, pk);
      if (dependent?.status === "open" && dependent.blocked === 0) {
        await this.tasks.writes.emit(tx, actor, { type: "task.unblocked", payload: { ...taskEventFields(dependent), unblocked_by: row.id } });
      }
    }
  }

  /** The run fails: every unfinished task of it fails with the reason. */
  async failRun(tx: Tx, actor: string, state: RunState, nodeKey: string): Promise<void> {
    await this.store.blueprintRuns.setStatus(tx, state.run.pk, "failed", now());
    await this.abandonAll(tx, actor, state, `run failed: node ${nodeKey} failed`);
    await this.bus.emit(tx, { type: "blueprint.run.failed", agentId: actor, project: state.run.project, payload: { ...this.runPayload(state), node_key: nodeKey } });
  }

  async cancelRun(tx: Tx, actor: string, state: RunState): Promise<void> {
    await this.store.blueprintRuns.setStatus(tx, state.run.pk, "cancelled", now());
    await this.abandonAll(tx, actor, state, "run cancelled");
    await this.emitRun(tx, actor, state, "blueprint.run.cancelled");
  }

  private async abandonAll(tx: Tx, actor: string, state: RunState, comment: string): Promise<void> {
    for (const row of (await this.reload(tx, state)).nodes) {
      if (row.task_pk === null || (row.task_status !== "open" && row.task_status !== "claimed")) continue;
      const task = await this.store.tasks.byPk(tx, row.task_pk);
      if (task) await this.tasks.closeIn(tx, actor, task, "failed", comment, { action: "abandon" });
    }
  }

  /**
   * Opens what can be opened and ends the run when nothing is left: timers start when their gate's
   * needs are done and pass when due; `task` gates pass once their task is completed.
   */
  async settle(tx: Tx, actor: string, runPk: number): Promise<void> {
    const state = await RunState.load(this.store, tx, runPk);
    if (!state || state.run.status !== "running") return;
    for (const row of state.nodes) {
      if (row.task_pk === null || row.task_status !== "open") continue;
      const gate = state.node(row.node_id).gate;
      if (!gate || gate.kind === "human") continue;
      const task = await this.store.tasks.byPk(tx, row.task_pk);
      if (!task || task.status !== "open" || task.blocked === 1) continue;
      if (gate.kind === "timer") {
        if (task.due_at === null) {
          await this.tasks.writes.changeIn(tx, actor, task, { due_at: addSeconds(now(), (durationMs(gate.after) ?? 0) / 1000) });
          continue;
        }
        if (task.due_at > now()) continue;
        await this.pass(tx, actor, task, "timer elapsed");
      } else {
        const target = row.gate_task_pk === null ? undefined : await this.store.tasks.byPk(tx, row.gate_task_pk);
        if (target?.status === "completed") await this.pass(tx, actor, task, `task ${target.id} completed`);
      }
    }
    const fresh = await RunState.load(this.store, tx, runPk);
    if (fresh?.run.status === "running" && fresh.finished()) {
      await this.store.blueprintRuns.setStatus(tx, runPk, "completed", now());
      await this.emitRun(tx, actor, fresh, "blueprint.run.completed");
    } else if (fresh) {
      await this.store.blueprintRuns.touch(tx, runPk, now());
    }
  }

  /** The server completes a gate (which settles the run again through `afterClose`). */
  private async pass(tx: Tx, actor: string, task: TaskRow, comment: string): Promise<void> {
    await this.tasks.closeIn(tx, actor, task, "completed", `gate passed: ${comment}`, { result: null, action: "pass" });
  }

  /** Passes the timer gates that are due; returns how many. */
  async passDueTimers(): Promise<number> {
    const due = await this.store.blueprintRuns.dueTimers(this.store.reader, now(), TIMER_BATCH);
    for (const row of due) {
      await this.store.transaction(async (tx) => {
        const run = await this.store.blueprintRuns.byPk(tx, row.run_pk);
        if (!run) return;
        await tx.lock(locks.blueprintRun(run.id));
        await this.settle(tx, run.created_by, row.run_pk);
      });
    }
    return due.length;
  }
}
