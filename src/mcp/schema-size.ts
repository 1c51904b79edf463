import type { JsonSchema } from "../../tools/layout.js";

// What a model needs of a JSON schema to call a tool well: types, enums, the description of each
// field, which fields are required. Lengths, patterns and formats stay on the server, which checks
// every call and names the field that is wrong; leaving them out keeps `tools/list` small enough to
// sit in every prompt (docs/mcp.md "Tool sets and their size").

const KEPT_KEYWORDS = new Set(["type", "enum", "const", "description", "items", "properties", "required", "anyOf", "oneOf", "default"]);
/** An output schema keeps its named definitions; an input's are left out (a field so typed reads as "anything"). */
const REFERENCES = new Set(["$ref", "$defs"]);

const isObject = (value: unknown): value is Record<string, unknown> => value !== null && typeof value === "object" && !Array.isArray(value);

/**
 * `schema` with only the keywords a model reads. A description is kept where a field is named (a
 * property, the root): one on an alternative or a list's item repeats what the field says. `X or
 * null` becomes one type list.
 */
export function compactSchema(schema: unknown, options: { references: boolean }, named = true): unknown {
  if (Array.isArray(schema)) return schema.map((item) => compactSchema(item, options, false));
  if (!isObject(schema)) return schema;
  const out: Record<string, unknown> = {};
  for (const [key, value] of Object.entries(schema)) {
    if (!KEPT_KEYWORDS.has(key) && !(options.references && REFERENCES.has(key))) continue;
    if (key === "description" && !named) continue;
    if ((key === "properties" || key === "$defs") && isObject(value)) {
      out[key] = Object.fromEntries(Object.entries(value).map(([name, field]) => [name, compactSchema(field, options, true)]));
    } else out[key] = compactSchema(value, options, false);
  }
  return nullableAsTypeList(out);
}

/** `{anyOf: [{type: T}, {type: "null"}]}` as `{type: [T, "null"]}`. */
function nullableAsTypeList(schema: Record<string, unknown>): Record<string, unknown> {
  const branches = schema.anyOf;
  if (!Array.isArray(branches) || branches.length !== 2) return schema;
  const [first, second] = branches as JsonSchema[];
  const plain = (branch: JsonSchema | undefined): branch is JsonSchema & { type: string } =>
    branch !== undefined && typeof branch.type === "string" && Object.keys(branch).length === 1;
  const other = plain(second) && second.type === "null" ? first : plain(first) && first.type === "null" ? second : undefined;
  if (!plain(other)) return schema;
  const { anyOf: _dropped, ...rest } = schema;
  return { ...rest, type: [other.type, "null"] };
}
