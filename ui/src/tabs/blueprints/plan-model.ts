// What the plan picture shows of each node: its title, its gate and fan-out, and — for a run —
// where its task (or each fan-out item's task) stands. Built from the blueprint's document and, for
// a run, the run's nodes and tasks; pure functions.

import type { BlueprintRun, RunNode } from "../../../../src/wire/blueprint-runs.js";
import type { BlueprintDocument, BlueprintNode } from "../../../../src/wire/blueprints.js";
import type { Task } from "../../../../src/wire/tasks.js";

/** A run node's status, with an open task that waits on an unfinished dependency told apart as `blocked`. */
export type NodeState = "pending" | "blocked" | "open" | "claimed" | "completed" | "failed" | "skipped";

export const NODE_STATES: { state: NodeState; label: string; meaning: string }[] = [
  { state: "pending", label: "pending", meaning: "a fan-out waiting for its items" },
  { state: "blocked", label: "blocked", meaning: "waits for what it needs" },
  { state: "open", label: "open", meaning: "ready to be claimed" },
  { state: "claimed", label: "claimed", meaning: "an agent works on it" },
  { state: "completed", label: "completed", meaning: "done" },
  { state: "failed", label: "failed", meaning: "failed or cancelled" },
  { state: "skipped", label: "skipped", meaning: "a fan-out with no items" },
];

type GateKind = "human" | "timer" | "task";

export interface PlanItem {
  key: string;
  /** The item itself, as text (`eu`, `{"id":3}`). */
  label: string;
  /** The task's title, when the run's tasks are known. */
  title: string | undefined;
  state: NodeState;
  taskId: string | null;
  assignee: string | null;
}

export interface PlanNodeView {
  id: string;
  title: string;
  needs: string[];
  gate: GateKind | null;
  /** What a gate waits for: the timer's duration, the task it follows. */
  gateDetail: string | null;
  /** Null in a blueprint's preview, where nothing runs. */
  state: NodeState | null;
  taskId: string | null;
  assignee: string | null;
  /** A human gate the signed-in agent may approve now: its Approve button is offered. */
  awaiting: boolean;
  /** A fan-out node: where its items come from, and its items once expanded. */
  fanout: { from: string; items: PlanItem[] } | null;
}

/** Whether a blueprint's `document` (typed loosely on the wire) has the nodes a picture needs. */
export function asDocument(document: Record<string, unknown>): BlueprintDocument | undefined {
  const nodes = document.nodes;
  if (!Array.isArray(nodes)) return undefined;
  const valid = nodes.every((node: unknown) => {
    if (!node || typeof node !== "object") return false;
    const record = node as Record<string, unknown>;
    return typeof record.id === "string" && typeof record.title === "string" && Array.isArray(record.needs);
  });
  if (!valid) return undefined;
  const typed = document as unknown as BlueprintDocument;
  return { ...typed, title: typeof document.title === "string" ? document.title : typed.name, params: Array.isArray(document.params) ? typed.params : [] };
}

const itemIndex = (key: string): number => Number(/\[(\d+)\]$/.exec(key)?.[1] ?? 0);

function itemLabel(item: unknown): string {
  if (typeof item === "string") return item;
  if (item === null || item === undefined) return "—";
  return JSON.stringify(item);
}

function stateOf(node: RunNode, task: Task | undefined): NodeState {
  if (node.status === "open" && task?.blocked) return "blocked";
  return node.status;
}

function gateOf(node: BlueprintNode): { gate: GateKind | null; gateDetail: string | null } {
  const gate = node.gate;
  if (!gate) return { gate: null, gateDetail: null };
  if (gate.kind === "timer") return { gate: "timer", gateDetail: `after ${gate.after}` };
  if (gate.kind === "task") return { gate: "task", gateDetail: `when task ${gate.task_id.slice(0, 8)} completes` };
  return { gate: "human", gateDetail: gate.title ?? null };
}

/** The nodes of a blueprint as its preview shows them: titles as written, nothing running. */
export function previewNodes(document: BlueprintDocument): PlanNodeView[] {
  return document.nodes.map((node) => ({
    id: node.id,
    title: node.title,
    needs: [...node.needs],
    ...gateOf(node),
    state: null,
    taskId: null,
    assignee: null,
    awaiting: false,
    fanout: node.foreach ? { from: node.foreach.from, items: [] } : null,
  }));
}

/**
 * The nodes of a run: the document's nodes with their tasks' titles and states; fan-out items in
 * their order. `me` is the signed-in agent, for whom a human gate is reserved.
 */
export function runNodes(document: BlueprintDocument, run: BlueprintRun, tasks: ReadonlyMap<string, Task>, me: string): PlanNodeView[] {
  const byNode = new Map<string, RunNode[]>();
  for (const node of run.nodes) byNode.set(node.node_id, [...(byNode.get(node.node_id) ?? []), node]);
  return document.nodes.map((node) => {
    const entries = byNode.get(node.id) ?? [];
    const gate = gateOf(node);
    if (node.foreach) {
      const expanded = entries.filter((entry) => entry.key !== node.id).sort((a, b) => itemIndex(a.key) - itemIndex(b.key));
      const placeholder = entries.find((entry) => entry.key === node.id);
      const items: PlanItem[] = expanded.map((entry) => {
        const task = entry.task_id ? tasks.get(entry.task_id) : undefined;
        return { key: entry.key, label: itemLabel(entry.item), title: task?.title, state: stateOf(entry, task), taskId: entry.task_id, assignee: task?.assigned_to ?? null };
      });
      return {
        id: node.id,
        title: node.title,
        needs: [...node.needs],
        ...gate,
        state: items.length ? groupState(items) : placeholder ? stateOf(placeholder, undefined) : "pending",
        taskId: null,
        assignee: null,
        awaiting: false,
        fanout: { from: node.foreach.from, items },
      };
    }
    const entry = entries[0];
    const task = entry?.task_id ? tasks.get(entry.task_id) : undefined;
    const state = entry ? stateOf(entry, task) : "pending";
    return {
      id: node.id,
      // The task's title has its placeholders filled in.
      title: task?.title ?? node.title,
      needs: [...node.needs],
      ...gate,
      state,
      taskId: entry?.task_id ?? null,
      assignee: task?.assigned_to ?? null,
      // A gate claimed but not completed (its completion was refused) still waits for the approval.
      awaiting: gate.gate === "human" && (state === "open" || state === "claimed") && run.status === "running" && task?.assigned_to === me,
      fanout: null,
    };
  });
}

/** A fan-out's state as a whole: done when every item is; else its most pressing item's. */
function groupState(items: readonly PlanItem[]): NodeState {
  if (items.every((item) => item.state === "completed" || item.state === "skipped")) return "completed";
  for (const state of ["failed", "claimed", "open", "blocked", "pending"] as const) if (items.some((item) => item.state === state)) return state;
  return "completed";
}

/**
 * The nodes of a run whose blueprint version cannot be read (it belongs to a project no longer
 * visible): one node per run node id, its needs taken from its tasks' dependencies.
 */
export function documentFromRun(run: BlueprintRun, tasks: ReadonlyMap<string, Task>): BlueprintDocument {
  const nodeOfTask = new Map<string, string>();
  for (const node of run.nodes) if (node.task_id) nodeOfTask.set(node.task_id, node.node_id);
  const nodes: BlueprintDocument["nodes"] = [];
  const seen = new Map<string, BlueprintDocument["nodes"][number]>();
  for (const entry of run.nodes) {
    const task = entry.task_id ? tasks.get(entry.task_id) : undefined;
    const needs = (task?.depends_on ?? []).map((id) => nodeOfTask.get(id)).filter((id): id is string => id !== undefined && id !== entry.node_id);
    const existing = seen.get(entry.node_id);
    if (existing) {
      existing.needs = [...new Set([...existing.needs, ...needs])];
      continue;
    }
    const fanout = entry.key !== entry.node_id || (entry.task_id === null && (entry.status === "pending" || entry.status === "skipped"));
    const node: BlueprintDocument["nodes"][number] = {
      id: entry.node_id,
      title: fanout ? entry.node_id : (task?.title ?? entry.node_id),
      needs: [...new Set(needs)],
      ...(fanout ? { foreach: { from: "?", max_items: 50 } } : {}),
      ...(task?.gate === "human" ? { gate: { kind: "human" as const } } : {}),
    };
    seen.set(entry.node_id, node);
    nodes.push(node);
  }
  return { name: run.blueprint.name, title: run.blueprint.name, description: "", params: [], nodes };
}

/** How many of a run's nodes are done (completed or skipped), of all. */
export function progressOf(run: BlueprintRun): { done: number; total: number; failed: number } {
  let done = 0;
  let failed = 0;
  for (const node of run.nodes) {
    if (node.status === "completed" || node.status === "skipped") done++;
    else if (node.status === "failed") failed++;
  }
  return { done, total: run.nodes.length, failed };
}
