import type { FieldError } from "../../core/errors.js";
import { blueprintDocument, MAX_BLUEPRINT_NODES, type BlueprintDocument, type BlueprintNode } from "../../wire/blueprints.js";
import { schemaCompileProblem } from "./contracts.js";
import { durationMs, MAX_TIMER_MS } from "./duration.js";
import { OUTPUT_SCHEMA_LIMITS, schemaBoundProblem } from "./schema-bounds.js";
import { placeholders } from "./template.js";

// The rules of a blueprint document beyond its shape (CONTRACT §17), checked at save. Every
// problem is reported, each with the path of the part at fault, so one 422 says all there is to
// fix. Nothing here evaluates anything: placeholders are looked up by name, schemas are only read.
// Sizes come first and cost one look each (issue 25): a document past them is refused before any
// rule that grows with the number of nodes, and a schema past its bounds is never compiled.

const MAX_NODES = MAX_BLUEPRINT_NODES;
const MAX_RUN_TASKS = 500;
const MAX_DOCUMENT_BYTES = 256 * 1024;

/** The JSON Schema keywords an output schema may use: enough to say what a task must hand over. */
const OUTPUT_SCHEMA_KEYWORDS = new Set([
  "type",
  "properties",
  "required",
  "items",
  "enum",
  "const",
  "minItems",
  "maxItems",
  "minLength",
  "maxLength",
  "minimum",
  "maximum",
  "additionalProperties",
  "title",
  "description",
]);
const SCHEMA_TYPES = new Set(["string", "number", "integer", "boolean", "array", "object", "null"]);

const isObject = (value: unknown): value is Record<string, unknown> => typeof value === "object" && value !== null && !Array.isArray(value);

/** Problems of an output schema, every keyword outside the allowed set among them. */
function schemaProblems(schema: unknown, path: string, problems: FieldError[]): void {
  if (!isObject(schema)) {
    problems.push({ path, message: "must be a JSON Schema object" });
    return;
  }
  for (const [key, value] of Object.entries(schema)) {
    const at = `${path}.${key}`;
    if (!OUTPUT_SCHEMA_KEYWORDS.has(key)) {
      problems.push({ path: at, message: `keyword not allowed in an output schema (allowed: ${[...OUTPUT_SCHEMA_KEYWORDS].join(", ")})` });
      continue;
    }
    if (key === "type") {
      const types = Array.isArray(value) ? value : [value];
      if (types.length === 0 || !types.every((type) => typeof type === "string" && SCHEMA_TYPES.has(type))) problems.push({ path: at, message: "must be a JSON Schema type" });
    } else if (key === "properties") {
      if (!isObject(value)) problems.push({ path: at, message: "must be an object of schemas" });
      else for (const [name, property] of Object.entries(value)) schemaProblems(property, `${at}.${name}`, problems);
    } else if (key === "items") {
      schemaProblems(value, at, problems);
    } else if (key === "additionalProperties") {
      if (typeof value !== "boolean") schemaProblems(value, at, problems);
    } else if (key === "required") {
      if (!Array.isArray(value) || !value.every((name) => typeof name === "string")) problems.push({ path: at, message: "must be a list of property names" });
    } else if (key === "enum") {
      if (!Array.isArray(value) || value.length === 0) problems.push({ path: at, message: "must be a non-empty list" });
    } else if (["minItems", "maxItems", "minLength", "maxLength"].includes(key)) {
      if (!Number.isSafeInteger(value) || (value as number) < 0) problems.push({ path: at, message: "must be a whole number, 0 or more" });
    } else if (key === "minimum" || key === "maximum") {
      if (typeof value !== "number" || !Number.isFinite(value)) problems.push({ path: at, message: "must be a number" });
    } else if ((key === "title" || key === "description") && typeof value !== "string") {
      problems.push({ path: at, message: "must be text" });
    }
  }
}

/** The schema a dotted path leads to inside an output schema, through `properties`; undefined if none. */
function schemaAt(schema: unknown, path: readonly string[]): Record<string, unknown> | undefined {
  let current: unknown = schema;
  for (const part of path) {
    if (!isObject(current) || !isObject(current.properties)) return undefined;
    current = current.properties[part];
  }
  return isObject(current) ? current : undefined;
}

const declaresArray = (schema: Record<string, unknown> | undefined): boolean =>
  schema !== undefined && (schema.type === "array" || (Array.isArray(schema.type) && schema.type.includes("array")));

/** A cycle among the nodes' needs, as the ids along it (first repeated last), or null. */
function findCycle(nodes: readonly BlueprintNode[]): string[] | null {
  const needs = new Map(nodes.map((node) => [node.id, node.needs]));
  const state = new Map<string, "visiting" | "done">();
  const stack: string[] = [];
  const visit = (id: string): string[] | null => {
    if (state.get(id) === "done" || !needs.has(id)) return null;
    if (state.get(id) === "visiting") return [...stack.slice(stack.indexOf(id)), id];
    state.set(id, "visiting");
    stack.push(id);
    for (const need of needs.get(id) ?? []) {
      const cycle = visit(need);
      if (cycle) return cycle;
    }
    stack.pop();
    state.set(id, "done");
    return null;
  };
  for (const node of nodes) {
    const cycle = visit(node.id);
    if (cycle) return cycle;
  }
  return null;
}

/** Every node's ancestors: the nodes it needs, directly or through others. Only for an acyclic plan. */
function ancestorsOf(nodes: readonly BlueprintNode[]): Map<string, Set<string>> {
  const byId = new Map(nodes.map((node) => [node.id, node]));
  const memo = new Map<string, Set<string>>();
  const of = (id: string): Set<string> => {
    const known = memo.get(id);
    if (known) return known;
    const found = new Set<string>();
    memo.set(id, found);
    for (const need of byId.get(id)?.needs ?? []) {
      if (!byId.has(need)) continue;
      found.add(need);
      for (const further of of(need)) found.add(further);
    }
    return found;
  };
  for (const node of nodes) of(node.id);
  return memo;
}

interface Scope {
  params: Map<string, string>;
  ancestors: Set<string>;
  fanOut: boolean;
}

/** Whether a placeholder names something the renderer will have: a param, the item, the run, an ancestor's output. */
function placeholderProblem(path: readonly string[], scope: Scope): string | null {
  const [root, first] = path;
  if (root === "params") return first !== undefined && scope.params.has(first) ? null : `no such param: ${path.join(".")}`;
  if (root === "item" || root === "index") {
    if (!scope.fanOut) return `${root} exists only in a foreach node`;
    return root === "index" && path.length > 1 ? "index has no fields" : null;
  }
  if (root === "run") return path.length === 2 && first === "id" ? null : "only run.id is known of the run";
  if (root === "nodes") {
    if (first === undefined || path[2] !== "output") return "must be nodes.<ancestor>.output…";
    return scope.ancestors.has(first) ? null : `${first} is not a node this one needs, directly or through others`;
  }
  return `unknown placeholder {{${path.join(".")}}}: use params.*, item, item.*, index, run.id or nodes.<ancestor>.output.*`;
}

function templateProblems(template: string | undefined, path: string, scope: Scope, problems: FieldError[]): void {
  if (template === undefined) return;
  const found = placeholders(template);
  for (const malformed of found.malformed) problems.push({ path, message: `malformed placeholder ${malformed.slice(0, 80)}` });
  for (const parts of found.paths) {
    const problem = placeholderProblem(parts, scope);
    if (problem) problems.push({ path, message: problem });
  }
}

/** The problems of one node's foreach source (§17: a param or an ancestor's declared array, no nested fan-out). */
function foreachProblems(node: BlueprintNode, at: string, document: BlueprintDocument, byId: Map<string, BlueprintNode>, ancestors: Set<string>): FieldError[] {
  if (!node.foreach) return [];
  const from = node.foreach.from;
  const path = `${at}.foreach.from`;
  const parts = from.split(".");
  if (parts[0] === "params") {
    const param = document.params.find((candidate) => candidate.name === parts[1]);
    if (parts.length !== 2 || !param) return [{ path, message: `no such param: ${from}` }];
    return param.type === "array" ? [] : [{ path, message: `param ${param.name} is not an array` }];
  }
  const [source, output, ...rest] = parts;
  if (source === undefined || output !== "output") return [{ path, message: 'must be "params.<name>" or "<ancestor>.output.<path>"' }];
  const origin = byId.get(source);
  if (!origin || !ancestors.has(source)) return [{ path, message: `${source} is not a node this one needs, directly or through others` }];
  if (origin.foreach) return [{ path, message: `${source} is itself a foreach node: fan-out does not nest` }];
  if (!declaresArray(rest.length === 0 ? origin.output_schema : schemaAt(origin.output_schema, rest))) {
    return [{ path, message: `${source}'s output_schema does not declare ${["output", ...rest].join(".")} as an array` }];
  }
  return [];
}

interface NodeContext {
  byId: Map<string, BlueprintNode>;
  ancestors: Map<string, Set<string>> | null;
  /** What is left of the document's output-schema values. */
  schemaBudget: { values: number };
}

function nodeProblems(node: BlueprintNode, index: number, document: BlueprintDocument, context: NodeContext): FieldError[] {
  const at = `nodes.${index}`;
  const problems: FieldError[] = [];
  node.needs.forEach((need, position) => {
    if (need === node.id) problems.push({ path: `${at}.needs.${position}`, message: "a node cannot need itself" });
    else if (!context.byId.has(need)) problems.push({ path: `${at}.needs.${position}`, message: `unknown node ${need}` });
  });
  if (node.output_schema !== undefined) {
    const bound = schemaBoundProblem(node.output_schema, `${at}.output_schema`, context.schemaBudget);
    if (bound) problems.push(bound);
    else {
      const before = problems.length;
      schemaProblems(node.output_schema, `${at}.output_schema`, problems);
      const compiled = problems.length === before ? schemaCompileProblem(node.output_schema) : null;
      if (compiled !== null) problems.push({ path: `${at}.output_schema`, message: compiled });
    }
  }
  node.done_check?.forEach((check, position) => {
    if (check.kind === "memory" && check.tag === undefined && check.query === undefined) problems.push({ path: `${at}.done_check.${position}`, message: "a memory check needs a tag, a query or both" });
  });
  if (node.gate?.kind === "timer") {
    const ms = durationMs(node.gate.after);
    if (ms === null || ms <= 0) problems.push({ path: `${at}.gate.after`, message: "must be an ISO 8601 duration of weeks, days, hours, minutes or seconds (PT2H, P1D)" });
    else if (ms > MAX_TIMER_MS) problems.push({ path: `${at}.gate.after`, message: "must be at most 30 days" });
  }
  if (node.max_attempts !== undefined && node.on_fail !== "retry") problems.push({ path: `${at}.max_attempts`, message: 'applies only with on_fail "retry"' });
  // Without a known set of ancestors (a cycle), what depends on them cannot be judged.
  const ancestors = context.ancestors?.get(node.id);
  if (!ancestors) return problems;
  problems.push(...foreachProblems(node, at, document, context.byId, ancestors));
  const scope: Scope = { params: new Map(document.params.map((param) => [param.name, param.type])), ancestors, fanOut: node.foreach !== undefined };
  templateProblems(node.title, `${at}.title`, scope, problems);
  templateProblems(node.description, `${at}.description`, scope, problems);
  templateProblems(node.assign_to, `${at}.assign_to`, scope, problems);
  node.tags?.forEach((tag, position) => templateProblems(tag, `${at}.tags.${position}`, scope, problems));
  if (node.gate?.kind === "human") templateProblems(node.gate.title, `${at}.gate.title`, scope, problems);
  return problems;
}

function paramProblems(document: BlueprintDocument): FieldError[] {
  const problems: FieldError[] = [];
  const seen = new Set<string>();
  document.params.forEach((param, index) => {
    if (seen.has(param.name)) problems.push({ path: `params.${index}.name`, message: `duplicate param ${param.name}` });
    seen.add(param.name);
    const fits = (value: unknown): boolean => valueFits(param.type, value);
    if (param.default !== undefined && !fits(param.default)) problems.push({ path: `params.${index}.default`, message: `must be of type ${param.type}` });
    param.enum?.forEach((value, position) => {
      if (!fits(value)) problems.push({ path: `params.${index}.enum.${position}`, message: `must be of type ${param.type}` });
    });
  });
  return problems;
}

/** Whether a value is of a param type. */
export function valueFits(type: string, value: unknown): boolean {
  switch (type) {
    case "string":
      return typeof value === "string";
    case "number":
      return typeof value === "number" && Number.isFinite(value);
    case "integer":
      return Number.isSafeInteger(value);
    case "boolean":
      return typeof value === "boolean";
    case "array":
      return Array.isArray(value);
    default:
      return isObject(value);
  }
}

const tooLarge = (): FieldError => ({ path: "", message: `the document exceeds ${MAX_DOCUMENT_BYTES / 1024} KiB` });
const tooManyNodes = (): FieldError => ({ path: "nodes", message: `at most ${MAX_NODES} nodes` });
const bytesOf = (value: unknown): number => Buffer.byteLength(JSON.stringify(value) ?? "", "utf8");

/**
 * A document as a client sent it (not yet parsed), or every problem of it: its size and node count
 * are looked at before the parse, which grows with them.
 */
export function validateBlueprint(raw: unknown): { ok: true; document: BlueprintDocument } | { ok: false; problems: FieldError[] } {
  if (bytesOf(raw) > MAX_DOCUMENT_BYTES) return { ok: false, problems: [tooLarge()] };
  const nodes = typeof raw === "object" && raw !== null ? (raw as { nodes?: unknown }).nodes : undefined;
  if (Array.isArray(nodes) && nodes.length > MAX_NODES) return { ok: false, problems: [tooManyNodes()] };
  const parsed = blueprintDocument.safeParse(raw);
  if (!parsed.success) {
    return { ok: false, problems: parsed.error.issues.map((issue) => ({ path: issue.path.map(String).join("."), message: issue.message })) };
  }
  return checkBlueprint(parsed.data);
}

/**
 * A document parsed at the edge (its node count already held there), or every problem of it.
 * Its size counts as JSON, defaults filled in.
 */
export function checkBlueprint(document: BlueprintDocument): { ok: true; document: BlueprintDocument } | { ok: false; problems: FieldError[] } {
  if (bytesOf(document) > MAX_DOCUMENT_BYTES) return { ok: false, problems: [tooLarge()] };
  if (document.nodes.length > MAX_NODES) return { ok: false, problems: [tooManyNodes()] };
  const problems: FieldError[] = [...paramProblems(document)];
  const byId = new Map<string, BlueprintNode>();
  document.nodes.forEach((node, index) => {
    if (byId.has(node.id)) problems.push({ path: `nodes.${index}.id`, message: `duplicate node id ${node.id}` });
    else byId.set(node.id, node);
  });
  const cycle = findCycle(document.nodes);
  if (cycle) problems.push({ path: "nodes", message: `blueprint has a cycle: ${cycle.join(" → ")}` });
  else if (!document.nodes.some((node) => node.needs.length === 0)) problems.push({ path: "nodes", message: "no root node: every node needs another" });
  const ancestors = cycle ? null : ancestorsOf(document.nodes);
  const context: NodeContext = { byId, ancestors, schemaBudget: { values: OUTPUT_SCHEMA_LIMITS.documentValues } };
  document.nodes.forEach((node, index) => problems.push(...nodeProblems(node, index, document, context)));
  const tasks = document.nodes.reduce((sum, node) => sum + (node.foreach ? node.foreach.max_items : 1), 0);
  if (tasks > MAX_RUN_TASKS) problems.push({ path: "nodes", message: `a run could make ${tasks} tasks; at most ${MAX_RUN_TASKS}` });
  return problems.length === 0 ? { ok: true, document } : { ok: false, problems };
}
