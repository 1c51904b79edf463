import type { Config } from "../../core/config.js";
import { conflict, forbidden, invalidFields, notFound, type FieldError } from "../../core/errors.js";
import { newId } from "../../core/ids.js";
import { now } from "../../core/time.js";
import type { EventBus } from "../../events/bus.js";
import type { BlueprintRow } from "../../store/blueprints.js";
import type { Store } from "../../store/store.js";
import type { BlueprintDocument, BlueprintNode } from "../../wire/blueprints.js";
import type { BlueprintRun, RunPlan, RunStatus } from "../../wire/blueprint-runs.js";
import { checkProjectWrite } from "../access.js";
import { viewpointOf, type Caller } from "../caller.js";
import { decodeCursor, pageOf, type Page } from "../paging.js";
import type { RunEngine } from "./engine.js";
import { checkParams, dependencyKeys, foreachSource, nodesInOrder, renderNode, type NodeSlot, type RenderedNode } from "./plan.js";
import { RunState } from "./run-state.js";
import { locks } from "../locks.js";
import type { Instantiation } from "../../wire/blueprint-inputs.js";

/** One task of a plan, before anything is written. */
interface PlannedTask {
  node: BlueprintNode;
  key: string;
  rendered: RenderedNode;
  dependencies: string[];
  item?: { value: unknown; index: number };
}

interface Plan {
  tasks: PlannedTask[];
  pending: string[];
  skipped: string[];
}

const isPk = (value: unknown): value is number => Number.isSafeInteger(value);

/**
 * The static plan of a run: every node that is not a fan-out becomes a task, a fan-out over a
 * param becomes one task per item (none: skipped), a fan-out over a node's output waits. Each
 * task's dependencies are the keys of the tasks its needs stand for.
 */
function planOf(document: BlueprintDocument, blueprintName: string, params: Record<string, unknown>, runId: string): { ok: true; plan: Plan } | { ok: false; errors: FieldError[] } {
  const slots = new Map<string, NodeSlot>();
  const plan: Plan = { tasks: [], pending: [], skipped: [] };
  const errors: FieldError[] = [];
  const context = { params, run: { id: runId }, nodes: {} };
  for (const node of nodesInOrder(document)) {
    const source = foreachSource(node);
    const dependencies = dependencyKeys(document, slots, node);
    if (source === null) {
      plan.tasks.push({ node, key: node.id, rendered: renderNode(node, blueprintName, context), dependencies });
      slots.set(node.id, { state: "task", keys: [node.id] });
    } else if (source.kind === "output") {
      plan.pending.push(node.id);
      slots.set(node.id, { state: "pending" });
    } else {
      const items = params[source.name];
      const list = Array.isArray(items) ? items : [];
      if (list.length > (node.foreach?.max_items ?? 0)) {
        errors.push({ path: `params.${source.name}`, message: `at most ${node.foreach?.max_items} items: node ${node.id} fans out over it` });
        continue;
      }
      if (list.length === 0) {
        plan.skipped.push(node.id);
        slots.set(node.id, { state: "skipped" });
        continue;
      }
      const keys: string[] = [];
      list.forEach((value, index) => {
        const key = `${node.id}[${index}]`;
        keys.push(key);
        plan.tasks.push({ node, key, rendered: renderNode(node, blueprintName, context, { value, index }), dependencies, item: { value, index } });
      });
      slots.set(node.id, { state: "task", keys });
    }
  }
  return errors.length === 0 ? { ok: true, plan } : { ok: false, errors };
}

/** Runs of blueprints (CONTRACT §17): instantiate, read, list, cancel. What moves a run on is the engine's. */
export class BlueprintRuns {
  constructor(
    private readonly store: Store,
    private readonly bus: EventBus,
    private readonly config: Config,
    private readonly engine: RunEngine,
  ) {}

  /** The version to run: the named project's blueprint, else a global one of that name. */
  private async blueprintFor(caller: Caller, name: string, project: string | null, version: number | undefined): Promise<BlueprintRow> {
    const viewpoint = viewpointOf(caller);
    for (const where of project === null ? [null] : [project, null]) {
      const versions = await this.store.blueprints.versions(this.store.reader, viewpoint, where, name, 1000);
      if (versions.length === 0) continue;
      const chosen = version === undefined ? versions[0] : versions.find((row) => row.version === version);
      if (!chosen) throw notFound("blueprint version");
      return chosen;
    }
    throw notFound("blueprint");
  }

  async instantiate(caller: Caller, name: string, input: Instantiation): Promise<{ run: BlueprintRun } | { plan: RunPlan }> {
    const project = input.project === undefined ? ((await this.store.agents.get(this.store.reader, caller.agentId))?.current_project ?? null) : input.project;
    const blueprint = await this.blueprintFor(caller, name, project, input.version);
    const document = JSON.parse(blueprint.document) as BlueprintDocument;
    const checked = checkParams(document, input.params);
    if (!checked.ok) throw invalidFields(checked.errors, "the params do not fit the blueprint");
    const runId = newId();
    const planned = planOf(document, blueprint.name, checked.params, runId);
    if (!planned.ok) throw invalidFields(planned.errors, "the params do not fit the blueprint");
    const { plan } = planned;
    const identity = { id: blueprint.id, name: blueprint.name, version: blueprint.version };
    if (input.dry_run) {
      await checkProjectWrite(this.store.projects, this.store.reader, caller, project);
      return {
        plan: {
          dry_run: true,
          blueprint: identity,
          project,
          params: checked.params,
          tasks: plan.tasks.map((task) => ({
            node_id: task.node.id,
            key: task.key,
            title: task.rendered.title,
            description: task.rendered.description,
            priority: task.node.priority ?? "normal",
            tags: task.rendered.tags,
            depends_on: task.dependencies,
            gate: task.node.gate?.kind ?? null,
            assigned_to: task.node.gate?.kind === "human" ? this.config.UI_AGENT_ID : task.rendered.assign_to,
            item: task.item?.value ?? null,
          })),
          pending: plan.pending,
          skipped: plan.skipped,
        },
      };
    }
    const runPk = await this.store.transaction(async (tx) => {
      await checkProjectWrite(this.store.projects, tx, caller, project);
      const at = now();
      const pk = await this.store.blueprintRuns.insertRun(tx, {
        id: runId,
        blueprint_pk: blueprint.pk,
        project,
        params: JSON.stringify(checked.params),
        status: "running",
        created_by: caller.agentId,
        created_at: at,
        updated_at: at,
      });
      const state = await RunState.load(this.store, tx, pk);
      if (!state) throw notFound("run");
      await this.engine.emitRun(tx, caller.agentId, state, "blueprint.run.started");
      const viewpoint = viewpointOf(caller);
      const pks = new Map<string, number>();
      for (const task of plan.tasks) {
        const gate = task.node.gate;
        let gateTaskPk: number | null = null;
        if (gate?.kind === "task") {
          const target = await this.engine.gateTarget(tx, viewpoint, gate.task_id);
          if (target === undefined) throw invalidFields([{ path: `nodes.${task.node.id}.gate.task_id`, message: "no such task" }], "the blueprint cannot run");
          gateTaskPk = target;
        }
        const dependencyPks = task.dependencies.map((key) => pks.get(key)).filter(isPk);
        const created = await this.engine.createTask(tx, state, caller.agentId, {
          node: task.node,
          key: task.key,
          rendered: task.rendered,
          dependencyPks,
          item: task.item,
          strictAssignee: true,
          gateTaskPk,
          anchors: await this.engine.anchorShas(tx, project, task.node),
        });
        pks.set(task.key, created.pk);
      }
      for (const [nodes, state_] of [
        [plan.pending, "pending"],
        [plan.skipped, "skipped"],
      ] as const) {
        for (const nodeId of nodes) {
          await this.store.blueprintRuns.insertNode(tx, { run_pk: pk, node_id: nodeId, key: nodeId, task_pk: null, state: state_, item: null, item_index: null, attempt: 1, anchors: "{}", gate_task_pk: null });
        }
      }
      await this.engine.settle(tx, caller.agentId, pk);
      return pk;
    });
    return { run: await this.view(runPk) };
  }

  private async view(runPk: number): Promise<BlueprintRun> {
    const state = await RunState.load(this.store, this.store.reader, runPk);
    if (!state) throw notFound("run");
    return state.view();
  }

  async get(caller: Caller, id: string): Promise<BlueprintRun> {
    const run = await this.store.blueprintRuns.visible(this.store.reader, viewpointOf(caller), id);
    if (!run) throw notFound("run");
    return this.view(run.pk);
  }

  async list(caller: Caller, input: { blueprint?: string | undefined; project?: string | null | undefined; status?: RunStatus | undefined; limit: number; cursor?: string | undefined }): Promise<Page<BlueprintRun>> {
    const after = decodeCursor(input.cursor, isPk);
    const rows = await this.store.blueprintRuns.list(this.store.reader, viewpointOf(caller), { name: input.blueprint, project: input.project, status: input.status }, after ?? null, input.limit + 1);
    const states = new Map<number, BlueprintRun>();
    for (const row of rows.slice(0, input.limit)) states.set(row.pk, await this.view(row.pk));
    return pageOf(rows, input.limit, (row) => states.get(row.pk) as BlueprintRun, (row) => row.pk);
  }

  /** By the run's creator or the owner role: the run stops and its unfinished tasks fail. */
  async cancel(caller: Caller, id: string): Promise<BlueprintRun> {
    const visible = await this.store.blueprintRuns.visible(this.store.reader, viewpointOf(caller), id);
    if (!visible) throw notFound("run");
    if (visible.created_by !== caller.agentId && caller.role !== "owner") throw forbidden("only the run's creator or an owner may cancel it");
    await this.store.transaction(async (tx) => {
      await tx.lock(locks.blueprintRun(visible.id));
      const state = await RunState.load(this.store, tx, visible.pk);
      if (!state) throw notFound("run");
      if (state.run.status !== "running") throw conflict("run is not running");
      await this.engine.cancelRun(tx, caller.agentId, state);
    });
    return this.view(visible.pk);
  }
}
