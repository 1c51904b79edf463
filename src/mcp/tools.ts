import { z } from "zod";
import { AppError } from "../core/errors.js";
import type { Role } from "../wire/roles.js";
import type { JsonSchema } from "../../tools/layout.js";
import { inputLayout } from "../../tools/layout.js";
import { parseInput, type Operation } from "../../tools/operation.js";
import { idempotencyKey as idempotencyKeySchema, type Caller, type OperationGateway } from "../../tools/gateway.js";
import { parseValue } from "../../tools/validation.js";
import { textBodyOf } from "../http/text-body.js";

export const TOOLSETS = ["core", "standard", "all"] as const;
/** The header that chooses a session's tool set on /mcp (the server's MCP_TOOLSET otherwise). */
export const TOOLSET_HEADER = "X-MCP-Toolset";
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
  /** The fields each result item keeps unless the call asks for `verbose`; absent: results are whole. */
  compactFields?: readonly string[];
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
const STANDARD_FAMILIES = ["memory_", "task_", "message_", "project_"];
/** Of those families, what serves a dashboard rather than an agent's session: listed only with `all`. */
const DASHBOARD_ONLY = new Set(["task_counts", "message_unread_count", "memory_central"]);
/** Tools of other families that `standard` lists too, by name (CONTRACT §11); the rest of their families wait for `all`. */
const STANDARD_TOOLS = new Set(["decision_record", "decision_list", "capture_add", "memory_related", "compile_check", "blueprint_instantiate", "blueprint_run_get"]);

/**
 * What a model needs of a search hit to decide what to read: the rest (counts, versions, score,
 * embedding model…) is bookkeeping that nearly doubles a search result. `verbose: true` returns it all.
 */
const COMPACT_HIT_FIELDS = ["id", "type", "project", "agent_id", "content", "similarity", "match", "tags", "updated_at"] as const;
const COMPACT_RESULTS: Record<string, readonly string[]> = { memory_search: COMPACT_HIT_FIELDS };
const VERBOSE = "verbose";

/**
 * Reads that change something all the same: these move the caller's memory cursor unless `peek`
 * (`session_load_agent` when it loads your own pack), so a host must not treat them as free to repeat.
 */
const MOVES_CURSOR = new Set(["session_start", "session_load_agent"]);

const inToolset = (name: string, toolset: Toolset): boolean =>
  toolset === "all" ||
  CORE.has(name) ||
  (toolset === "standard" && (STANDARD_TOOLS.has(name) || (!DASHBOARD_ONLY.has(name) && STANDARD_FAMILIES.some((family) => name.startsWith(family)))));

const toJson = (schema: z.ZodType): JsonSchema => {
  const json = z.toJSONSchema(schema, { io: "output", unrepresentable: "any" }) as JsonSchema;
  delete json.$schema;
  return json;
};

/**
 * What a model needs to call a tool well: types, enums, descriptions, which fields are required.
 * Lengths, patterns and formats stay on the server, which checks every call and names the field
 * that is wrong; leaving them out keeps `tools/list` small enough to sit in every prompt.
 */
const KEPT_KEYWORDS = new Set(["type", "enum", "const", "description", "items", "properties", "required", "anyOf", "default"]);

function compact(schema: unknown, isPropertyMap = false): unknown {
  if (Array.isArray(schema)) return schema.map((item) => compact(item));
  if (schema === null || typeof schema !== "object") return schema;
  return Object.fromEntries(
    Object.entries(schema)
      .filter(([key]) => isPropertyMap || KEPT_KEYWORDS.has(key))
      .map(([key, value]) => [key, compact(value, key === "properties" && !isPropertyMap)]),
  );
}

/** List fields that REST reads from a query string, where a list is written as `a,b`: a tool takes that form too. */
function listFieldsOf(operation: Operation): string[] {
  const layout = inputLayout(operation);
  if (layout.inBody) return [];
  return layout.rest.filter((key) => layout.properties[key]?.type === "array");
}

function inputSchema(operation: Operation, listFields: readonly string[], compactResults: boolean): JsonSchema & { type: "object" } {
  // Fields REST reads from a header (memory_update's `if_match`) are plain arguments of a tool.
  const json = compact(z.toJSONSchema(operation.input, { io: "input", unrepresentable: "any" })) as JsonSchema;
  const properties = { ...json.properties };
  for (const key of listFields) {
    const { description, ...list } = properties[key] ?? {};
    properties[key] = { ...(description === undefined ? {} : { description }), anyOf: [list, { type: "string" }] };
  }
  if (compactResults) properties[VERBOSE] = { type: "boolean", description: "every field of each hit (score, version, counts…), not only the main ones" };
  const required = json.required ?? [];
  return { type: "object", properties, ...(required.length > 0 ? { required } : {}) };
}

/** Hints that differ from MCP's defaults (not read-only, destructive, not idempotent, open world). */
function annotations(operation: Operation): McpTool["definition"]["annotations"] {
  if (MOVES_CURSOR.has(operation.name)) return { destructiveHint: false, openWorldHint: false };
  if (operation.kind === "read" || operation.kind === "list") return { readOnlyHint: true, openWorldHint: false };
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
function outputShape(operation: Operation, compactFields?: readonly string[]): Pick<McpTool, "shape"> & { outputSchema?: JsonSchema & { type: "object" } } {
  if (operation.output === undefined) return { shape: "none" };
  const { $defs, ...item } = toJson(operation.output) as JsonSchema & { $defs?: Record<string, JsonSchema> };
  if (compactFields) relaxRequired(item, $defs, compactFields);
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
  if ((operation.http.otherStatuses ?? []).some((other) => other.status === 204)) {
    return { shape: "wrapped", outputSchema: wrap({ result: { anyOf: [item, { type: "null" }] } }, ["result"]) };
  }
  const ref = typeof item.$ref === "string" ? /^#\/\$defs\/(.+)$/.exec(item.$ref)?.[1] : undefined;
  const root = ref !== undefined && $defs?.[ref] ? $defs[ref] : item;
  if (root.type === "object") return { shape: "object", outputSchema: { ...root, type: "object", ...defs } };
  return { shape: "wrapped", outputSchema: wrap({ result: item }, ["result"]) };
}

/** A compact result must still satisfy the listed schema: only its fields stay required of each item. */
function relaxRequired(schema: JsonSchema, $defs: Record<string, JsonSchema> | undefined, kept: readonly string[]): void {
  const item = schema.type === "array" && schema.items ? schema.items : schema;
  const ref = typeof item.$ref === "string" ? /^#\/\$defs\/(.+)$/.exec(item.$ref)?.[1] : undefined;
  const target = ref !== undefined && $defs?.[ref] ? $defs[ref] : item;
  if (target.required) target.required = target.required.filter((key) => kept.includes(key));
}

/**
 * The catalogue's agent operations as tools, in catalogue order, filtered to the toolset and (with
 * `role`) to what that role may call. Output schemas are listed only with the `all` set: they are
 * most of the listing's size, and results carry `structuredContent` either way.
 */
export function mcpTools(operations: readonly Operation[], toolset: Toolset, role?: Role): McpTool[] {
  return operations
    // A body of text either way (the JSON Lines export and import) is a file to move, not a tool result.
    .filter((operation) => operation.access === "agent" && operation.kind !== "stream" && !operation.http.contentType && !textBodyOf(operation))
    .filter((operation) => role === undefined || ((!operation.roles || operation.roles.includes(role)) && (role !== "viewer" || operation.kind === "read" || operation.kind === "list")))
    .map((operation) => ({ operation, name: TOOL_NAMES[operation.name] ?? operation.name }))
    .filter(({ name }) => inToolset(name, toolset))
    .map(({ operation, name }) => {
      const compactFields = COMPACT_RESULTS[name];
      const listFields = listFieldsOf(operation);
      const { shape, outputSchema } = outputShape(operation, compactFields);
      return {
        name,
        operation,
        shape,
        listFields,
        ...(compactFields ? { compactFields } : {}),
        definition: {
          // No separate title: the snake_case name says as much, and every character here is in every prompt.
          name,
          description: operation.description,
          inputSchema: inputSchema(operation, listFields, compactFields !== undefined),
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
export const IDEMPOTENCY_META_KEY = "idempotency_key";

/**
 * The tool's arguments as the operation's input, and whether the caller asked for whole results.
 * What only a tool takes (`verbose`, a list written as one string) is settled here; the operation
 * validates everything else exactly as it does for REST.
 */
function toolArguments(tool: McpTool, raw: unknown): { input: unknown; verbose: boolean } {
  if (raw === null || typeof raw !== "object" || Array.isArray(raw)) return { input: raw, verbose: false };
  const input: Record<string, unknown> = { ...(raw as Record<string, unknown>) };
  let verbose = false;
  if (tool.compactFields && VERBOSE in input) {
    const value = input[VERBOSE];
    if (typeof value !== "boolean") {
      throw new AppError("VALIDATION_FAILED", "request validation failed", { errors: [{ path: VERBOSE, message: "expected a boolean" }] });
    }
    verbose = value;
    delete input[VERBOSE];
  }
  for (const key of tool.listFields) {
    const value = input[key];
    if (typeof value === "string") input[key] = value.split(",").map((item) => item.trim()).filter((item) => item !== "");
  }
  return { input, verbose };
}

const keepFields = (item: unknown, fields: readonly string[]): unknown =>
  item !== null && typeof item === "object" ? Object.fromEntries(fields.filter((field) => field in item).map((field) => [field, (item as Record<string, unknown>)[field]])) : item;

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
    const { input: raw, verbose } = toolArguments(tool, call.arguments ?? {});
    const input = parseInput(tool.operation, raw);
    const outcome = await gateway.invoke(tool.operation, { caller, input, requestId, idempotencyKey });
    // A replayed refusal comes back as the stored answer's status and error body.
    if (outcome.status >= 400) {
      const body = outcome.body as { detail: string; code: string; errors?: unknown };
      return refusalResult(body);
    }
    let body = outcome.body;
    if (tool.compactFields && !verbose) {
      const fields = tool.compactFields;
      body = Array.isArray(body) ? body.map((item) => keepFields(item, fields)) : keepFields(body, fields);
    }
    let structured: Record<string, unknown> | undefined;
    if (tool.shape === "list") structured = { items: body, next_cursor: outcome.nextCursor ?? null };
    else if (tool.shape === "object" && body !== undefined) structured = body as Record<string, unknown>;
    else if (tool.shape === "wrapped") structured = { result: body ?? null };
    if (structured === undefined) return { content: [{ type: "text", text: "done" }] };
    return { content: [{ type: "text", text: JSON.stringify(structured) }], structuredContent: structured };
  } catch (error) {
    if (error instanceof AppError) return refusalResult(error.toBody() as { detail: string; code: string; errors?: unknown });
    gateway.log.error("tool failed", { tool: tool.name, request_id: requestId, error });
    return errorResult("internal server error", "INTERNAL");
  }
}
