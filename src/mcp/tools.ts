import { z } from "zod";
import { AppError, invalid } from "../core/errors.js";
import type { Role } from "../wire/roles.js";
import type { JsonSchema } from "../../tools/layout.js";
import { inputLayout } from "../../tools/layout.js";
import { isReadOnlyKind, parseInput, type Operation } from "../../tools/operation.js";
import { idempotencyKey as idempotencyKeySchema, type Caller, type OperationGateway } from "../../tools/gateway.js";
import { parseValue } from "../../tools/validation.js";
import { textBodyOf } from "../../tools/layout.js";
import { tokensOfChars } from "../core/tokens.js";
import { RENDERERS } from "./render.js";
import { compactSchema } from "./schema-size.js";

export const TOOLSETS = ["core", "standard", "all"] as const;
/** The header that chooses a session's tool set on /mcp (the server's MCP_TOOLSET otherwise). */
export { TOOLSET_HEADER } from "./toolset-header.js";
export type Toolset = (typeof TOOLSETS)[number];

/** A catalogue operation as an MCP tool. */
export interface McpTool {
  name: string;
  operation: Operation;
  definition: {
    name: string;
    description: string;
    inputSchema: JsonSchema & { type: "object" };
    outputSchema?: JsonSchema & { type: "object" };
    annotations: { readOnlyHint?: boolean; destructiveHint?: boolean; idempotentHint?: boolean; openWorldHint: boolean };
  };
  /** How the operation's result becomes the tool's object-shaped structured content. */
  shape: "object" | "list" | "wrapped" | "none";
  /** The operation has a compact form (a `compact` input): the tool answers with it unless the call asks for `verbose`. */
  compacts: boolean;
  /** Input fields that take a list or, as in a query string, one comma-separated string. */
  listFields: readonly string[];
}

/** Tool names that differ from the operation's: the contract names the waiting tool `wait_for`. */
const TOOL_NAMES: Record<string, string> = { event_wait: "wait_for" };

/** The dozen tools that carry a whole session. */
const CORE = new Set([
  "session_start",
  "memory_search",
  "memory_write",
  "task_list",
  "task_create",
  "task_claim",
  "task_complete",
  "message_inbox",
  "message_send",
  "session_handoff",
  "wait_for",
]);
/**
 * What `standard` adds to `core`: reading and changing what the session touches, and the part-two
 * tools an agent uses in a session (CONTRACT §11). Administration, dashboards, paging aids and
 * what `session_start` already returns wait for `all`: `standard` must fit in 4,000 tokens.
 */
const STANDARD_TOOLS = new Set([
  "memory_get",
  "memory_update",
  "memory_delete",
  "memory_list",
  "memory_related",
  "task_get",
  "task_update",
  "task_unclaim",
  "task_fail",
  "task_comment",
  "task_recommended",
  "message_consume",
  "project_join",
  "decision_record",
  "decision_list",
  "capture_add",
  "compile_check",
  "blueprint_instantiate",
  "blueprint_run_get",
]);

/**
 * Inputs a tool accepts but does not list: filters for dashboards and the archivist, vectors no
 * model reads. Every one still works when passed, exactly as over REST.
 */
const UNLISTED_INPUTS: Record<string, readonly string[]> = {
  memory_list: ["updated_before", "created_before", "min_version", "min_distinct_readers", "include_embedding", "order", "confidence_min", "scope"],
  memory_search: ["include_embedding", "max_content_length", "context", "max_distance", "confidence_min", "diversify", "source_kind"],
  memory_get: ["include_embedding", "context"],
  memory_related: ["min_activation", "hops", "include_similar", "rels"],
  memory_write: ["source"],
  task_list: ["run_id", "node_key"],
  session_handoff: ["agent_id", "host"],
  capture_add: ["ttl_hours", "host"],
};

/** Fields whose name says enough in a tool's schema: their shared description is left to the API reference. */
const SELF_EVIDENT = new Set(["id", "limit", "cursor", "tags", "comment", "task_id", "run_id", "reply_to", "content", "body", "description"]);

/** The input field of an operation with a compact form: a tool sets it unless the call asks for `verbose`. */
const COMPACT = "compact";
const VERBOSE = "verbose";
/** The response header of a read filled to `max_tokens`: a tool's result carries it as `left_out`. */
const LEFT_OUT_HEADER = "X-Left-Out";

/**
 * Reads that change something all the same: these move the caller's memory cursor unless `peek`
 * (`session_load_agent` when it loads your own pack), so a host must not treat them as free to repeat.
 */
const MOVES_CURSOR = new Set(["session_start", "session_load_agent"]);

const inToolset = (name: string, toolset: Toolset): boolean =>
  toolset === "all" ||
  CORE.has(name) ||
  (toolset === "standard" && STANDARD_TOOLS.has(name));

const toJson = (schema: z.ZodType): JsonSchema => {
  const json = z.toJSONSchema(schema, { io: "output", unrepresentable: "any" }) as JsonSchema;
  delete json.$schema;
  return json;
};

/** List fields that REST reads from a query string, where a list is written as `a,b`: a tool takes that form too. */
function listFieldsOf(operation: Operation): string[] {
  const layout = inputLayout(operation);
  if (layout.inBody) return [];
  return layout.rest.filter((key) => layout.properties[key]?.type === "array");
}

function inputSchema(operation: Operation, listFields: readonly string[], compacts: boolean): JsonSchema & { type: "object" } {
  // Fields REST reads from a header (memory_update's `if_match`) are plain arguments of a tool.
  const json = compactSchema(z.toJSONSchema(operation.input, { io: "input", unrepresentable: "any" }), { references: false }) as JsonSchema;
  const unlisted = new Set([...(UNLISTED_INPUTS[operation.name] ?? []), COMPACT]);
  const properties = Object.fromEntries(
    Object.entries(json.properties ?? {})
      .filter(([key]) => !unlisted.has(key))
      .map(([key, field]) => {
        if (!SELF_EVIDENT.has(key)) return [key, field];
        const { description: _shared, ...rest } = field;
        return [key, rest];
      }),
  );
  for (const key of listFields) {
    if (unlisted.has(key)) continue;
    const { description, ...list } = properties[key] ?? {};
    properties[key] = { ...(description === undefined ? {} : { description }), anyOf: [list, { type: "string" }] };
  }
  if (compacts) properties[VERBOSE] = { type: "boolean", description: "whole records, every field" };
  const required = (json.required ?? []).filter((key) => !unlisted.has(key));
  return { type: "object", properties, ...(required.length > 0 ? { required } : {}) };
}

/** Hints that differ from MCP's defaults (not read-only, destructive, not idempotent, open world). */
function annotations(operation: Operation): McpTool["definition"]["annotations"] {
  if (MOVES_CURSOR.has(operation.name)) return { destructiveHint: false, openWorldHint: false };
  // No stream is a tool (`mcpTools` leaves them out), so a read-only kind here is a read or a list.
  if (isReadOnlyKind(operation.kind)) return { readOnlyHint: true, openWorldHint: false };
  return {
    ...(operation.destructive ? {} : { destructiveHint: false }),
    ...(operation.kind === "update" || operation.kind === "delete" ? { idempotentHint: true } : {}),
    openWorldHint: false,
  };
}

/**
 * Output schemas must be objects at the root. Named schemas come out of zod as a `$ref` into
 * `$defs`: the root is resolved to its definition, and wrappers carry the `$defs` at their own
 * root, where every `#/$defs/…` reference still points.
 */
function outputShape(operation: Operation): Pick<McpTool, "shape"> & { outputSchema?: JsonSchema & { type: "object" } } {
  if (operation.output === undefined) return { shape: "none" };
  const { $defs, ...item } = compactSchema(toJson(operation.output), { references: true }) as JsonSchema & { $defs?: Record<string, JsonSchema> };
  const defs = $defs ? { $defs } : {};
  const wrap = (properties: Record<string, JsonSchema>, required: string[]): JsonSchema & { type: "object" } => ({ type: "object", properties, required, ...defs });
  if (operation.kind === "list") {
    return {
      shape: "list",
      outputSchema: wrap({ items: { type: "array", items: item }, next_cursor: { type: ["string", "null"], description: "pass as `cursor` for the next page" } }, [
        "items",
        "next_cursor",
      ]),
    };
  }
  // An operation that may answer with nothing (204) still returns an object: `{result: null}`.
  const leftOut = LEFT_OUT_HEADER in (operation.http.responseHeaders ?? {}) ? { left_out: { type: "integer", description: "with max_tokens: results that did not fit" } } : {};
  if ((operation.http.otherStatuses ?? []).some((other) => other.status === 204)) {
    return { shape: "wrapped", outputSchema: wrap({ result: { anyOf: [item, { type: "null" }] } }, ["result"]) };
  }
  const ref = typeof item.$ref === "string" ? /^#\/\$defs\/(.+)$/.exec(item.$ref)?.[1] : undefined;
  const root = ref !== undefined && $defs?.[ref] ? $defs[ref] : item;
  if (root.type === "object") return { shape: "object", outputSchema: { ...root, type: "object", ...withoutUnused($defs, root) } };
  // One of several objects (an entry, or its compact form): still an object at the root.
  const branches = Array.isArray(item.anyOf) ? item.anyOf : [];
  const resolve = (branch: JsonSchema): JsonSchema => {
    const name = typeof branch.$ref === "string" ? /^#\/\$defs\/(.+)$/.exec(branch.$ref)?.[1] : undefined;
    return name !== undefined && $defs?.[name] ? $defs[name] : branch;
  };
  if (branches.length > 0 && branches.every((branch) => resolve(branch).type === "object")) return { shape: "object", outputSchema: { type: "object", anyOf: branches, ...defs } };
  return { shape: "wrapped", outputSchema: wrap({ result: item, ...leftOut }, ["result"]) };
}

/** The definitions `root` (and they themselves) still refer to: the one it was resolved from is now the root itself. */
function withoutUnused($defs: Record<string, JsonSchema> | undefined, root: JsonSchema): { $defs?: Record<string, JsonSchema> } {
  if ($defs === undefined) return {};
  const kept = Object.entries($defs).filter(([name]) => JSON.stringify([root, ...Object.values($defs).filter((def) => def !== $defs[name])]).includes(`"#/$defs/${name}"`));
  return kept.length === 0 ? {} : { $defs: Object.fromEntries(kept) };
}

/**
 * The catalogue's agent operations as tools, in catalogue order, filtered to the toolset and (with
 * `role`) to what that role may call. Output schemas are listed only with the `all` set: they are
 * most of the listing's size, and results carry `structuredContent` either way.
 */
export function mcpTools(operations: readonly Operation[], toolset: Toolset, role?: Role): McpTool[] {
  return operations
    // A body of text either way (the JSON Lines export and import) is a file to move, not a tool
    // result; a feed is for feed readers; a REST-only operation is for machines, not models.
    .filter((operation) => operation.access === "agent" && !operation.restOnly && operation.kind !== "stream" && !operation.http.contentType && !textBodyOf(operation))
    .filter((operation) => role === undefined || ((!operation.roles || operation.roles.includes(role)) && (role !== "viewer" || isReadOnlyKind(operation.kind))))
    .map((operation) => ({ operation, name: TOOL_NAMES[operation.name] ?? operation.name }))
    .filter(({ name }) => inToolset(name, toolset))
    .map(({ operation, name }) => {
      const compacts = COMPACT in operation.input.shape;
      const listFields = listFieldsOf(operation);
      const { shape, outputSchema } = outputShape(operation);
      return {
        name,
        operation,
        shape,
        listFields,
        compacts,
        definition: {
          // No separate title: the snake_case name says as much, and every character here is in every prompt.
          name,
          description: operation.description,
          inputSchema: inputSchema(operation, listFields, compacts),
          ...(outputSchema && toolset === "all" ? { outputSchema } : {}),
          annotations: annotations(operation),
        },
      };
    });
}

export interface ToolResult {
  [key: string]: unknown;
  content: { type: "text"; text: string }[];
  structuredContent?: Record<string, unknown>;
  isError?: boolean;
}

const errorResult = (detail: string, code: string): ToolResult => ({
  content: [{ type: "text", text: JSON.stringify({ detail, code }) }],
  structuredContent: { detail, code },
  isError: true,
});

function refusalResult(body: { detail: string; code: string; errors?: unknown }): ToolResult {
  const result = errorResult(body.detail, body.code);
  if (body.errors !== undefined) {
    result.structuredContent = { ...result.structuredContent, errors: body.errors };
    result.content = [{ type: "text", text: JSON.stringify(result.structuredContent) }];
  }
  return result;
}

/** Where a tool call carries its idempotency key: `params._meta.idempotency_key`, as REST's header. */
const IDEMPOTENCY_META_KEY = "idempotency_key";

/**
 * The tool's arguments as the operation's input, and whether the caller asked for whole results.
 * What only a tool takes (`verbose`, a list written as one string) is settled here; the operation
 * validates everything else exactly as it does for REST.
 */
function toolArguments(tool: McpTool, raw: unknown): { input: unknown; compact: boolean } {
  if (raw === null || typeof raw !== "object" || Array.isArray(raw)) return { input: raw, compact: false };
  const input: Record<string, unknown> = { ...(raw as Record<string, unknown>) };
  let compact = false;
  if (tool.compacts) {
    const value = input[VERBOSE];
    if (value !== undefined && typeof value !== "boolean") {
      throw invalid(VERBOSE, "expected a boolean");
    }
    delete input[VERBOSE];
    // A call may still name `compact` itself, as over REST; otherwise it is what `verbose` is not.
    if (input[COMPACT] === undefined) input[COMPACT] = value !== true;
    compact = input[COMPACT] === true;
  }
  for (const key of tool.listFields) {
    const value = input[key];
    if (typeof value === "string") input[key] = value.split(",").map((item) => item.trim()).filter((item) => item !== "");
  }
  return { input, compact };
}

/**
 * Runs a tool for `caller` through the same gateway as REST: validation, roles, limits, services.
 * A call whose `_meta` carries an idempotency key is answered once per (agent, key), like REST.
 */
export async function callTool(
  gateway: OperationGateway,
  tool: McpTool,
  caller: Caller,
  call: { arguments?: unknown; _meta?: Record<string, unknown> | undefined },
  requestId: string,
): Promise<ToolResult> {
  try {
    gateway.authorize(tool.operation, caller);
    const idempotencyKey = parseValue(idempotencyKeySchema, call._meta?.[IDEMPOTENCY_META_KEY], `_meta.${IDEMPOTENCY_META_KEY}`);
    const { input: raw, compact } = toolArguments(tool, call.arguments ?? {});
    const input = parseInput(tool.operation, raw);
    const outcome = await gateway.invoke(tool.operation, { caller, input, requestId, idempotencyKey });
    // A replayed refusal comes back as the stored answer's status and error body.
    if (outcome.status >= 400) {
      const body = outcome.body as { detail: string; code: string; errors?: unknown };
      return refusalResult(body);
    }
    const body = outcome.body;
    let structured: Record<string, unknown> | undefined;
    if (tool.shape === "list") structured = { items: body, next_cursor: outcome.nextCursor ?? null };
    else if (tool.shape === "object" && body !== undefined) structured = body as Record<string, unknown>;
    else if (tool.shape === "wrapped") structured = { result: body ?? null };
    if (structured === undefined) return { content: [{ type: "text", text: "done" }] };
    const leftOut = outcome.headers[LEFT_OUT_HEADER];
    if (leftOut !== undefined) structured.left_out = Number(leftOut);
    const render = compact ? RENDERERS[tool.name] : undefined;
    const text = render ? render(structured as never) : JSON.stringify(structured);
    gateway.metrics.served(caller.agentId, tool.name, "mcp", tokensOfChars(text.length));
    return { content: [{ type: "text", text }], structuredContent: structured };
  } catch (error) {
    if (error instanceof AppError) return refusalResult(error.toBody() as { detail: string; code: string; errors?: unknown });
    gateway.log.error("tool failed", { tool: tool.name, request_id: requestId, error });
    return errorResult("internal server error", "INTERNAL");
  }
}
