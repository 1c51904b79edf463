import type { RunNodeRow, RunRow } from "../../store/blueprint-runs.js";
import type { Reader } from "../../store/store.js";
import type { Store } from "../../store/store.js";
import type { BlueprintDocument, BlueprintNode } from "../../wire/blueprints.js";
import type { BlueprintRun, RunNode } from "../../wire/blueprint-runs.js";
import { InternalError } from "../../core/errors.js";
import { dependencyKeys, type NodeSlot, type RenderContext } from "./plan.js";

/** A run as its engine sees it: the run, the document of its version, its node rows. */
export class RunState {
  readonly byId: Map<string, BlueprintNode>;

  constructor(
    readonly run: RunRow,
    readonly document: BlueprintDocument,
    readonly nodes: RunNodeRow[],
  ) {
    this.byId = new Map(document.nodes.map((node) => [node.id, node]));
  }

  static async load(store: Store, r: Reader, runPk: number): Promise<RunState | undefined> {
    const run = await store.blueprintRuns.byPk(r, runPk);
    if (!run) return undefined;
    return new RunState(run, JSON.parse(run.document) as BlueprintDocument, await store.blueprintRuns.nodes(r, runPk));
  }

  node(nodeId: string): BlueprintNode {
    const node = this.byId.get(nodeId);
    if (!node) throw new InternalError("invariant", `run ${this.run.id} has no node ${nodeId}`);
    return node;
  }

  /** How each node stands: its tasks' keys, pending, or skipped. */
  slots(): Map<string, NodeSlot> {
    const slots = new Map<string, NodeSlot>();
    for (const row of this.nodes) {
      if (row.state !== "task") slots.set(row.node_id, { state: row.state });
      else {
        const slot = slots.get(row.node_id);
        if (slot?.state === "task") slot.keys.push(row.key);
        else slots.set(row.node_id, { state: "task", keys: [row.key] });
      }
    }
    return slots;
  }

  /** The task keys of the run's node rows. */
  taskPks(): Map<string, number> {
    return new Map(this.nodes.flatMap((row) => (row.task_pk === null ? [] : [[row.key, row.task_pk] as const])));
  }

  /** The tasks a task of `node` waits for. */
  dependencyPks(node: BlueprintNode): number[] {
    const pks = this.taskPks();
    return dependencyKeys(this.document, this.slots(), node).flatMap((key) => {
      const pk = pks.get(key);
      return pk === undefined ? [] : [pk];
    });
  }

  /** Node rows of the nodes that need `nodeId` directly. */
  dependentsOf(nodeId: string): RunNodeRow[] {
    return this.nodes.filter((row) => this.byId.get(row.node_id)?.needs.includes(nodeId));
  }

  /** Placeholder values: params, the run, and the output of every completed non-fan-out node. */
  context(outputs: Map<string, unknown>): RenderContext {
    const nodes: Record<string, { output: unknown }> = {};
    for (const [nodeId, output] of outputs) nodes[nodeId] = { output };
    return { params: JSON.parse(this.run.params) as Record<string, unknown>, run: { id: this.run.id }, nodes };
  }

  /** Whether the run has nothing left to do: every node completed, skipped, or failed where its node says go on. */
  finished(): boolean {
    return this.nodes.every((row) => {
      if (row.state === "skipped") return true;
      if (row.state === "pending") return false;
      if (row.task_status === "completed") return true;
      return row.task_status === "failed" && this.byId.get(row.node_id)?.on_fail === "continue";
    });
  }

  view(): BlueprintRun {
    return {
      id: this.run.id,
      blueprint: { id: this.run.blueprint_id, name: this.run.blueprint_name, version: this.run.blueprint_version },
      project: this.run.project,
      params: JSON.parse(this.run.params) as Record<string, unknown>,
      status: this.run.status,
      created_by: this.run.created_by,
      created_at: this.run.created_at,
      updated_at: this.run.updated_at,
      nodes: this.nodes.map(nodeView),
    };
  }
}

const nodeView = (row: RunNodeRow): RunNode => ({
  node_id: row.node_id,
  key: row.key,
  task_id: row.task_id,
  status: row.state === "task" ? (row.task_status ?? "failed") : row.state,
  item: row.item === null ? null : (JSON.parse(row.item) as unknown),
  attempt: row.attempt,
});
