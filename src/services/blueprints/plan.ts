import type { FieldError } from "../../core/errors.js";
import type { BlueprintDocument, BlueprintNode } from "../../wire/blueprints.js";
import { TASK_TITLE_MAX } from "../../wire/tasks.js";
import { renderTemplate, scanPlaceholders } from "./template.js";
import { valueFits } from "./validate.js";

// What a run is made of, worked out without touching the store: params checked against the
// blueprint, the nodes in an order where needs come first, the fan-out items of a node, the tasks
// a node's needs stand for, and each task's rendered text. Instantiation, dry runs and the
// expansion of a fan-out at completion all use these.

const DESCRIPTION_MAX = 8000;

/** Params with defaults applied, or every problem with its path (`params.<name>`). */
export function checkParams(document: BlueprintDocument, given: Record<string, unknown>): { ok: true; params: Record<string, unknown> } | { ok: false; errors: FieldError[] } {
  const errors: FieldError[] = [];
  const params: Record<string, unknown> = {};
  const declared = new Set(document.params.map((param) => param.name));
  for (const name of Object.keys(given)) if (!declared.has(name)) errors.push({ path: `params.${name}`, message: "not a param of this blueprint" });
  for (const param of document.params) {
    const value = Object.hasOwn(given, param.name) ? given[param.name] : param.default;
    const path = `params.${param.name}`;
    if (value === undefined) {
      if (param.required) errors.push({ path, message: "required" });
      continue;
    }
    if (!valueFits(param.type, value)) errors.push({ path, message: `must be of type ${param.type}` });
    else if (param.enum && !param.enum.some((allowed) => JSON.stringify(allowed) === JSON.stringify(value))) errors.push({ path, message: "must be one of the enum's values" });
    else params[param.name] = value;
  }
  return errors.length === 0 ? { ok: true, params } : { ok: false, errors };
}

/** The nodes with every node after the nodes it needs (the document is acyclic). */
export function nodesInOrder(document: BlueprintDocument): BlueprintNode[] {
  const byId = new Map(document.nodes.map((node) => [node.id, node]));
  const ordered: BlueprintNode[] = [];
  const placed = new Set<string>();
  const place = (node: BlueprintNode): void => {
    if (placed.has(node.id)) return;
    placed.add(node.id);
    for (const need of node.needs) {
      const needed = byId.get(need);
      if (needed) place(needed);
    }
    ordered.push(node);
  };
  for (const node of document.nodes) place(node);
  return ordered;
}

/** Where a fan-out's items come from: a param, or a node's output at a path. */
export type ForeachSource = { kind: "param"; name: string } | { kind: "output"; node: string; path: string[] };

export function foreachSource(node: BlueprintNode): ForeachSource | null {
  if (!node.foreach) return null;
  const [root, second, ...rest] = node.foreach.from.split(".");
  if (root === "params") return { kind: "param", name: second as string };
  return { kind: "output", node: root as string, path: rest };
}

/** How a node stands in a run: its tasks (by key), waiting for its items, or skipped for having none. */
export type NodeSlot = { state: "task"; keys: string[] } | { state: "pending" } | { state: "skipped" };

/**
 * The keys of the tasks a need on `need` waits for: a node's task; a fan-out's item tasks, or
 * (until it expands) the task its items come from, or (skipped) what it needed itself.
 */
function tasksForNeed(document: BlueprintDocument, slots: ReadonlyMap<string, NodeSlot>, need: string): string[] {
  const node = document.nodes.find((candidate) => candidate.id === need);
  const slot = slots.get(need);
  if (!node || !slot) return [];
  if (slot.state === "task") return slot.keys;
  if (slot.state === "pending") {
    const source = foreachSource(node);
    return source?.kind === "output" ? tasksForNeed(document, slots, source.node) : [];
  }
  return [...new Set(node.needs.flatMap((further) => tasksForNeed(document, slots, further)))];
}

/** The dependency keys of a task of `node`. */
export const dependencyKeys = (document: BlueprintDocument, slots: ReadonlyMap<string, NodeSlot>, node: BlueprintNode): string[] => [
  ...new Set(node.needs.flatMap((need) => tasksForNeed(document, slots, need))),
];

export interface RenderContext {
  params: Record<string, unknown>;
  run: { id: string };
  nodes: Record<string, { output: unknown }>;
}

export interface RenderedNode {
  title: string;
  description: string;
  tags: string[];
  assign_to: string | null;
}

/** A node's text for one task, placeholders filled from the run (and the item, for a fan-out task). */
export function renderNode(node: BlueprintNode, blueprintName: string, context: RenderContext, item?: { value: unknown; index: number }): RenderedNode {
  const values: Record<string, unknown> = { ...context, ...(item ? { item: item.value, index: item.index } : {}) };
  const render = (template: string, max: number): string => renderTemplate(template, values, max);
  const title = node.gate?.kind === "human" && node.gate.title !== undefined ? node.gate.title : node.title;
  const tags = [...new Set([...(node.tags ?? []).map((tag) => render(tag, 64)).filter((tag) => tag !== ""), `blueprint:${blueprintName}`.slice(0, 64)])];
  const assignee = node.assign_to === undefined ? "" : render(node.assign_to, 200).trim();
  return { title: render(title, TASK_TITLE_MAX), description: render(node.description ?? "", DESCRIPTION_MAX), tags, assign_to: assignee === "" ? null : assignee };
}

/** Whether a node's text names another node's output, so it is rendered again when that node completes. */
export const mentionsOutputOf = (node: BlueprintNode, other: string): boolean =>
  [node.title, node.description ?? "", node.assign_to ?? "", ...(node.tags ?? []), node.gate?.kind === "human" ? (node.gate.title ?? "") : ""].some((text) =>
    scanPlaceholders(text).some((span) => span.path?.[0] === "nodes" && span.path[1] === other),
  );
